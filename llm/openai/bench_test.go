package openai_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
)

// BenchmarkExtractFacts measures the provider's own cost per task call
// (render, request, parse, validate) against the in-process server.
func BenchmarkExtractFacts(b *testing.B) {
	f := newFixture(b, nil)
	ctx := context.Background()
	in := memento.ExtractInput{Message: "I loved Alien and Arrival, but I can't stand jump scares."}
	for b.Loop() {
		f.srv.Enqueue(llmtest.ChatPath, factsReply)
		if _, err := f.model.ExtractFacts(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbed measures embedding 256 texts (4 batches) of 384 dimensions.
func BenchmarkEmbed(b *testing.B) {
	f := newFixture(b, nil)
	f.srv.AutoEmbed(384)
	texts := make([]string, 256)
	for i := range texts {
		texts[i] = fmt.Sprintf("concept number %d", i)
	}
	e := f.model.Embedder()
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
}
