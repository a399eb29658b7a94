package openai_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

// TestJobBudgetLeavesTurnsASlot fills the job budget with model calls the
// server holds, and checks that a turn's call still goes out and is
// answered while they wait, and that the job over the budget waits for a
// slot of its own budget rather than taking the turn's.
func TestJobBudgetLeavesTurnsASlot(t *testing.T) {
	const jobSlots = 2
	f := newFixture(t, func(c *openai.Config) { c.Concurrency, c.JobConcurrency = 1, jobSlots })
	release := make(chan struct{})
	f.srv.Default(string(openai.TaskSummarise), llmtest.ChatJSON(map[string]any{"summary": "They talked."}).WithHold(release))
	f.srv.Default(string(openai.TaskExtractFacts), factsReply)
	arrived := make(chan string, 16)
	f.srv.OnRequest(func(r llmtest.Request) { arrived <- r.Task })

	job := memento.InBackground(context.Background())
	in := memento.SummariseInput{Messages: []memento.Message{{Role: memento.RoleUser, Text: "hi"}}}
	var jobs sync.WaitGroup
	jobErrs := make(chan error, jobSlots+1)
	for range jobSlots + 1 {
		jobs.Go(func() {
			if _, err := f.model.Summarise(job, in); err != nil {
				jobErrs <- err
			}
		})
	}
	for range jobSlots {
		if task := <-arrived; task != string(openai.TaskSummarise) {
			t.Fatalf("arrived %q, want a job's summarise", task)
		}
	}

	turn := make(chan error, 1)
	go func() {
		_, err := f.model.ExtractFacts(context.Background(), memento.ExtractInput{Message: "I love westerns"})
		turn <- err
	}()
	select {
	case err := <-turn:
		if err != nil {
			t.Fatalf("turn call: %v", err)
		}
	case <-time.After(30 * time.Second):
		// A guard against hanging, not a measure of speed: with one
		// shared budget the turn's call waits for the held jobs for ever.
		close(release)
		t.Fatal("the turn's model call found no slot while the job budget was full")
	}
	if got := countTask(f.srv, openai.TaskSummarise); got != jobSlots {
		t.Errorf("summarise requests sent while held = %d, want %d (the job budget)", got, jobSlots)
	}

	close(release)
	jobs.Wait()
	close(jobErrs)
	for err := range jobErrs {
		t.Error(err)
	}
	if got := countTask(f.srv, openai.TaskSummarise); got != jobSlots+1 {
		t.Errorf("summarise requests = %d, want %d", got, jobSlots+1)
	}
}

func countTask(s *llmtest.Server, task openai.Task) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Task == string(task) {
			n++
		}
	}
	return n
}

// BenchmarkTurnCallWhileJobsWait measures a turn's model call while the
// job budget is full of calls the server holds: the cost is the turn's
// own round trip, whatever the backlog of jobs.
func BenchmarkTurnCallWhileJobsWait(b *testing.B) {
	const jobSlots = 4
	f := newFixture(b, func(c *openai.Config) { c.Concurrency, c.JobConcurrency = 1, jobSlots })
	release := make(chan struct{})
	f.srv.Default(string(openai.TaskSummarise), llmtest.ChatJSON(map[string]any{"summary": "They talked."}).WithHold(release))
	f.srv.Default(string(openai.TaskExtractFacts), factsReply)
	arrived := make(chan string, 2*jobSlots)
	f.srv.OnRequest(func(r llmtest.Request) {
		if r.Task == string(openai.TaskSummarise) {
			arrived <- r.Task
		}
	})
	job := memento.InBackground(context.Background())
	in := memento.SummariseInput{Messages: []memento.Message{{Role: memento.RoleUser, Text: "hi"}}}
	var jobs sync.WaitGroup
	for range 2 * jobSlots {
		jobs.Go(func() { _, _ = f.model.Summarise(job, in) })
	}
	for range jobSlots {
		<-arrived
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.model.ExtractFacts(context.Background(), memento.ExtractInput{Message: "I love westerns"}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(release)
	jobs.Wait()
}
