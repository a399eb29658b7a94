// Package llmcheck asks a language model to do each of its tasks once,
// with a small fixed input, and reports which answers were usable, so a
// model server that cannot do one task (answers missing a required field,
// a schema it ignores) is found by `memento llm check` before a person
// meets it in a chat.
//
// It works on memento.LanguageModel and memento.Embedder, so it checks any
// provider; give it the provider itself, not a llm/fallback wrapper, whose
// stand-in would hide the failures it is looking for.
package llmcheck

import (
	"context"
	"time"

	"github.com/memento-ai/memento"
)

// Result is what one task did.
type Result struct {
	// Task is a memento.ModelTask* name.
	Task      string  `json:"task"`
	OK        bool    `json:"ok"`
	LatencyMs float64 `json:"latencyMs"`
	// Error says why the answer was unusable, with the provider's detail
	// (the schema violation, the server's message): the reader is the
	// operator.
	Error string `json:"error,omitempty"`
	// StructuredOutput is the provider's structured-output mode after the
	// task, for providers that have one.
	StructuredOutput string `json:"structuredOutput,omitempty"`
}

// structured is a provider that reports its structured-output mode
// (llm/openai's Model).
type structured interface{ StructuredOutput() string }

// Inputs of the checks: one message about films, as the agent and the
// memory pipeline see them every day.
var (
	message = "I loved Arrival and Heat, but I can't stand jump scares."
	schema  = []memento.AttributeSpec{
		{Name: "LIKES", Description: "Titles, people and themes the user likes.", Mode: "semantic"},
		{Name: "DISLIKES", Description: "Titles, people and themes the user dislikes.", Mode: "semantic"},
	}
	facts = []memento.Fact{{Text: "loved Arrival"}, {Text: "loved Heat"}, {Text: "does not like jump scares", Negated: true}}
	merge = memento.MergeInput{Attribute: schema[0], Current: "loved Alien", Fact: facts[0]}
)

// Run asks model to do each task once, in the order of
// memento.LanguageModel, then emb (when not nil) to embed one text. It
// stops early only when ctx ends; each task's result says how it went.
func Run(ctx context.Context, model memento.LanguageModel, emb memento.Embedder) []Result {
	type check struct {
		task string
		run  func(ctx context.Context) error
	}
	ac := memento.NewActiveContext()
	checks := []check{
		{memento.ModelTaskUnderstand, func(ctx context.Context) error {
			_, err := model.UnderstandRequest(ctx, memento.UnderstandInput{Message: "three comedy movies from the 90s", Context: ac})
			return err
		}},
		{memento.ModelTaskSentinel, func(ctx context.Context) error {
			_, err := model.WorthRemembering(ctx, message, schema)
			return err
		}},
		{memento.ModelTaskExtractFacts, func(ctx context.Context) error {
			_, err := model.ExtractFacts(ctx, memento.ExtractInput{Message: message})
			return err
		}},
		{memento.ModelTaskReviewExtraction, func(ctx context.Context) error {
			_, err := model.ReviewExtraction(ctx, message, facts)
			return err
		}},
		{memento.ModelTaskAssignAttributes, func(ctx context.Context) error {
			_, err := model.AssignAttributes(ctx, facts, schema)
			return err
		}},
		{memento.ModelTaskMergeFact, func(ctx context.Context) error {
			_, err := model.MergeFact(ctx, merge)
			return err
		}},
		{memento.ModelTaskReviewMerge, func(ctx context.Context) error {
			_, err := model.ReviewMerge(ctx, merge, "loved Alien and Arrival")
			return err
		}},
		{memento.ModelTaskSummarise, func(ctx context.Context) error {
			_, err := model.Summarise(ctx, memento.SummariseInput{MaxChars: 300, Messages: []memento.Message{
				{Role: memento.RoleUser, Text: message},
				{Role: memento.RoleAssistant, Text: "Noted: Arrival and Heat, and no jump scares. Want something like them?"},
			}})
			return err
		}},
		{memento.ModelTaskPreferences, func(ctx context.Context) error {
			_, err := model.ExtractPreferences(ctx, message)
			return err
		}},
		{memento.ModelTaskDescribeCluster, func(ctx context.Context) error {
			_, err := model.DescribeCluster(ctx, []memento.ClusterMember{{Concept: "heist films", Weight: 0.8}, {Concept: "slow burn thrillers", Weight: 0.5}})
			return err
		}},
		{memento.ModelTaskWriteReply, func(ctx context.Context) error {
			_, err := model.WriteReply(ctx, memento.ReplyInput{
				Message: "three comedy movies from the 90s", Context: ac, Searched: true,
				Titles: []memento.Title{{ID: "tt0107048", Title: "Groundhog Day", Type: "movie", Year: 1993, Genres: []string{"Comedy"}}},
			})
			return err
		}},
	}
	if emb != nil {
		checks = append(checks, check{memento.ModelTaskEmbed, func(ctx context.Context) error {
			_, err := emb.Embed(ctx, []string{"science fiction"})
			return err
		}})
	}
	results := make([]Result, 0, len(checks))
	for _, c := range checks {
		if ctx.Err() != nil {
			break
		}
		start := time.Now()
		err := c.run(ctx)
		r := Result{Task: c.task, OK: err == nil, LatencyMs: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			r.Error = err.Error()
		}
		if s, ok := model.(structured); ok && c.task != memento.ModelTaskEmbed {
			r.StructuredOutput = s.StructuredOutput()
		}
		results = append(results, r)
	}
	return results
}

// OK reports whether every result is.
func OK(results []Result) bool {
	for _, r := range results {
		if !r.OK {
			return false
		}
	}
	return len(results) > 0
}
