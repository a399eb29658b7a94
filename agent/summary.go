package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// DefaultSummaryChars bounds a thread summary.
const DefaultSummaryChars = 1200

// SummaryWorker folds a thread's newest exchange into its summary list. It
// is the handler of memento.JobSummarise jobs, which the agent enqueues with
// every turn; the user never waits for it.
type SummaryWorker struct {
	Threads  memento.ThreadService
	Messages memento.MessageLog
	Model    memento.Summariser
	MaxChars int
}

// Handle is a memento.JobHandler. It is idempotent: a job whose messages a
// summary already covers does nothing.
func (w *SummaryWorker) Handle(ctx context.Context, _ string, payload json.RawMessage) error {
	var job memento.MessageJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("summarise: bad payload: %w", err)
	}
	s := memento.Scope{Tenant: job.Tenant, User: job.User}
	latest, err := w.Threads.LatestSummary(ctx, s, job.Thread)
	if err != nil {
		return fmt.Errorf("summarise %s: %w", job.Thread, err)
	}
	var prev string
	var after int64
	if latest != nil {
		if latest.ToSeq >= job.Seq {
			return nil
		}
		prev, after = latest.Text, latest.ToSeq
	}
	// The message the previous summary ended on is read again: when it is
	// an answer, the new exchange's "not those" or "the second one" refer
	// to its titles, which the summary itself does not list.
	msgs, err := w.Messages.Messages(ctx, s, job.Thread, max(after-1, 0), 0)
	if err != nil {
		if memento.ErrorCode(err) == memento.ENOTFOUND {
			return nil // the user was forgotten in the meantime
		}
		return fmt.Errorf("summarise %s: %w", job.Thread, err)
	}
	var answered, exchange []memento.Message
	for _, m := range msgs {
		switch {
		case m.Seq <= after:
			if m.Role == memento.RoleAssistant {
				answered = append(answered, m)
			}
		case m.Seq <= job.Seq:
			exchange = append(exchange, m)
		}
	}
	if len(exchange) == 0 {
		return nil
	}
	limit := w.MaxChars
	if limit <= 0 {
		limit = DefaultSummaryChars
	}
	text, err := w.Model.Summarise(ctx, memento.SummariseInput{Previous: prev, Messages: append(answered, exchange...), MaxChars: limit})
	if err != nil {
		return fmt.Errorf("summarise %s: %w", job.Thread, err)
	}
	if strings.TrimSpace(text) == "" {
		// Nothing worth keeping yet (a greeting, thanks): no summary is
		// written, and the next job folds this exchange in with its own.
		return nil
	}
	sources := make([]string, len(exchange))
	for i, m := range exchange {
		sources[i] = m.ID
	}
	_, err = w.Threads.AppendSummary(ctx, s, memento.Summary{
		Thread: job.Thread, Text: text, FromSeq: exchange[0].Seq, ToSeq: exchange[len(exchange)-1].Seq, Sources: sources,
	})
	if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		return fmt.Errorf("summarise %s: %w", job.Thread, err)
	}
	return nil
}
