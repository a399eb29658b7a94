package jobctx

import (
	"context"
	"testing"
)

func TestMark(t *testing.T) {
	ctx := context.Background()
	if Is(ctx) {
		t.Fatal("a plain context is a job's")
	}
	job := With(ctx)
	if !Is(job) {
		t.Fatal("a marked context is not a job's")
	}
	child, cancel := context.WithCancel(job)
	defer cancel()
	if !Is(child) {
		t.Fatal("a job's derived context lost the mark")
	}
	if !Is(context.WithoutCancel(job)) {
		t.Fatal("a job's context without cancel lost the mark")
	}
}
