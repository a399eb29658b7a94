package offline

import (
	"context"
	"math"
	"testing"

	"github.com/memento-ai/memento"
)

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func embedOne(tb testing.TB, e *Embedder, text string) []float32 {
	tb.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		tb.Fatal(err)
	}
	return vs[0]
}

func TestEmbedderSynonymsAreCloser(t *testing.T) {
	e := NewEmbedder(0)
	tests := []struct {
		a, b, unrelated string
	}{
		{"sci-fi", "science fiction", "romantic comedy"},
		{"scary", "horror", "documentary"},
		{"funny", "comedy", "western"},
		{"cartoon", "animated", "war"},
		{"rom-com", "romantic comedy", "slasher"},
		{"scary movies", "horror films", "musicals"},
		{"kids", "family", "noir"},
		{"comedies", "comedy", "thriller"},
		{"I don't like strawberries", "strawberries", "very sweet desserts"},
		{"heist films", "heist movies", "slasher horror"},
	}
	for _, tt := range tests {
		t.Run(tt.a+"~"+tt.b, func(t *testing.T) {
			a, b, u := embedOne(t, e, tt.a), embedOne(t, e, tt.b), embedOne(t, e, tt.unrelated)
			near, far := cosine(a, b), cosine(a, u)
			if near <= far+0.2 {
				t.Errorf("cos(%q, %q) = %.2f, not clearly above cos(%q, %q) = %.2f", tt.a, tt.b, near, tt.a, tt.unrelated, far)
			}
		})
	}
}

func TestEmbedderUnitLengthAndDeterministic(t *testing.T) {
	ctx := context.Background()
	texts := []string{"", "   ", "sci-fi", "I love science fiction and can't stand horror", "日本の映画", "!!!", "a"}
	for _, dim := range []int{8, 64, 256, 1024} {
		e := NewEmbedder(dim)
		vs, err := e.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		again, err := NewEmbedder(dim).Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if len(v) != dim {
				t.Fatalf("dim %d: vector of %q has length %d", dim, texts[i], len(v))
			}
			var norm float64
			for k, x := range v {
				norm += float64(x) * float64(x)
				if x != again[i][k] {
					t.Fatalf("dim %d: vector of %q differs between runs", dim, texts[i])
				}
			}
			if math.Abs(math.Sqrt(norm)-1) > 1e-5 {
				t.Errorf("dim %d: |v(%q)| = %v, want 1", dim, texts[i], math.Sqrt(norm))
			}
		}
	}
}

func TestEmbedderID(t *testing.T) {
	tests := []struct {
		dim     int
		wantID  string
		wantDim int
	}{
		{0, "offline-hash/v1/256", 256},
		{-3, "offline-hash/v1/256", 256},
		{64, "offline-hash/v1/64", 64},
	}
	for _, tt := range tests {
		e := NewEmbedder(tt.dim)
		if e.ID() != tt.wantID || e.Dim() != tt.wantDim {
			t.Errorf("NewEmbedder(%d): ID %q Dim %d, want %q %d", tt.dim, e.ID(), e.Dim(), tt.wantID, tt.wantDim)
		}
	}
}

func TestEmbedderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewEmbedder(0).Embed(ctx, []string{"x"})
	if memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Errorf("Embed with a cancelled context: error %v, want EUNAVAILABLE", err)
	}
}
