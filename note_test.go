package memento_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

func TestNotes(t *testing.T) {
	if memento.AddNote(context.Background(), "lost") {
		t.Error("AddNote without a collector reported that the note was taken")
	}
	if got := memento.Notes(context.Background()); got != nil {
		t.Errorf("Notes without a collector = %q, want nil", got)
	}

	ctx := memento.WithNotes(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { memento.AddNote(ctx, "the model stood down") })
	}
	wg.Wait()
	memento.AddNote(ctx, "")
	memento.AddNote(ctx, "second")
	if diff := cmp.Diff([]string{"the model stood down", "second"}, memento.Notes(ctx)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}

	inner := memento.WithNotes(ctx)
	memento.AddNote(inner, "inner only")
	if diff := cmp.Diff([]string{"inner only"}, memento.Notes(inner)); diff != "" {
		t.Errorf("inner notes (-want +got):\n%s", diff)
	}
	if got := len(memento.Notes(ctx)); got != 2 {
		t.Errorf("outer collector has %d notes after an inner one was used, want 2", got)
	}
}

func TestBackground(t *testing.T) {
	ctx := context.Background()
	if memento.IsBackground(ctx) {
		t.Error("an unmarked context is background work")
	}
	if !memento.IsBackground(memento.InBackground(ctx)) {
		t.Error("a marked context is not background work")
	}
}
