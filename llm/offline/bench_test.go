package offline

import (
	"context"
	"testing"

	"github.com/memento-ai/memento"
)

// benchMessages are typical turns, mixed: requests, follow-ups,
// rejections, preferences and small talk.
var benchMessages = []string{
	"Discover exactly 3 comedy movies from 2010 onward.",
	"Movie only.",
	"Make it older.",
	"I didn't like them, please discover different ones",
	"Keanu Reeves action movies from the 90s",
	"Hi! I'm looking for some funny comedy movies. Something similar to She's Out of My League (2010)",
	"I love sci-fi but can't stand horror, and I watch everything on Netflix",
	"My wife and I watch rom-coms on Fridays",
	"thanks, sounds good",
	"I don't really like horror movies what about thrillers",
}

func BenchmarkUnderstandRequest(b *testing.B) {
	m := newTestModel(b)
	ctx := context.Background()
	c := memento.NewActiveContext()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := m.UnderstandRequest(ctx, memento.UnderstandInput{Message: benchMessages[i%len(benchMessages)], Context: c}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkExtractFacts(b *testing.B) {
	m := newTestModel(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := m.ExtractFacts(ctx, memento.ExtractInput{Message: benchMessages[i%len(benchMessages)]}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkExtractPreferences(b *testing.B) {
	m := newTestModel(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := m.ExtractPreferences(ctx, benchMessages[i%len(benchMessages)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkEmbed(b *testing.B) {
	e := NewEmbedder(DefaultDim)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := e.Embed(ctx, []string{benchMessages[i%len(benchMessages)]}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
}
