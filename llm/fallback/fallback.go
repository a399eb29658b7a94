package fallback

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
)

// what says in words what each task does, for the note.
var what = map[string]string{
	memento.ModelTaskUnderstand:       "reading your message",
	memento.ModelTaskSentinel:         "deciding whether the message is worth remembering",
	memento.ModelTaskExtractFacts:     "listing the facts of the message",
	memento.ModelTaskReviewExtraction: "reviewing the facts",
	memento.ModelTaskAssignAttributes: "sorting the facts into memory",
	memento.ModelTaskMergeFact:        "merging a fact into memory",
	memento.ModelTaskReviewMerge:      "reviewing a merge",
	memento.ModelTaskSummarise:        "summarising the conversation",
	memento.ModelTaskPreferences:      "finding likes and dislikes",
	memento.ModelTaskDescribeCluster:  "describing a group of preferences",
	memento.ModelTaskWriteReply:       "writing the reply",
}

// Note is the note a stand-in answer for task leaves, as memento.Notes
// returns it.
func Note(task string) string {
	w := what[task]
	if w == "" {
		w = task
	}
	return fmt.Sprintf("The language model gave an unusable answer when %s, so the built-in rules did it instead.", w)
}

// Options are the optional parts of a Model.
type Options struct {
	// Logger receives a warning per stand-in answer; nil discards them.
	Logger *slog.Logger
	// Registerer, when set, exposes memento_llm_fallbacks_total.
	Registerer prometheus.Registerer
}

// Model is a memento.LanguageModel that asks Primary and, for an unusable
// answer, StandIn. It is safe for concurrent use when both models are.
type Model struct {
	primary, standIn memento.LanguageModel
	log              *slog.Logger
	count            *prometheus.CounterVec

	mu     sync.Mutex
	counts map[string]int
}

var _ memento.LanguageModel = (*Model)(nil)

// New returns a Model over primary with standIn for its unusable answers.
// Errors: EINVALID when a model is missing, and what registering the
// metric returns.
func New(primary, standIn memento.LanguageModel, opts Options) (*Model, error) {
	if primary == nil || standIn == nil {
		return nil, memento.Errorf(memento.EINVALID, "a fallback model needs a primary model and a stand-in")
	}
	m := &Model{primary: primary, standIn: standIn, log: opts.Logger, counts: map[string]int{},
		count: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memento_llm_fallbacks_total",
			Help: "Language-model answers given by the offline stand-in because the model's answer was unusable, by task.",
		}, []string{"task"})}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(m.count); err != nil {
			return nil, fmt.Errorf("register fallback metrics: %w", err)
		}
	}
	return m, nil
}

// Primary returns the model asked first, for what only it can do (its
// health check, its usage counters).
func (m *Model) Primary() memento.LanguageModel { return m.primary }

// Name is the primary's: the stand-in answers only now and then.
func (m *Model) Name() string { return m.primary.Name() }

// Fallbacks returns how many answers the stand-in gave, by task.
func (m *Model) Fallbacks() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.counts)
}

// unusable reports whether err is an answer a stand-in should replace.
// An ended ctx is not: the stand-in would answer a caller who left.
func unusable(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && memento.ErrorCode(err) == memento.EUPSTREAM
}

// ask runs primary and, when its answer is unusable, standIn, recording
// the fallback. The stand-in's own error, if any, is returned with the
// primary's joined for the log.
func ask[T any](ctx context.Context, m *Model, task string, primary, standIn func() (T, error)) (T, error) {
	out, err := primary()
	if !unusable(ctx, err) {
		return out, err
	}
	m.count.WithLabelValues(task).Inc()
	m.mu.Lock()
	m.counts[task]++
	m.mu.Unlock()
	m.log.LogAttrs(ctx, slog.LevelWarn, "language model answer unusable; the offline model answers instead",
		slog.String("task", task), slog.String("model", m.primary.Name()), slog.String("error", err.Error()))
	out, serr := standIn()
	if serr != nil {
		var zero T
		return zero, fmt.Errorf("%s: stand-in after an unusable answer (%v): %w", task, err, serr)
	}
	memento.AddNote(ctx, Note(task))
	return out, nil
}

// UnderstandRequest implements memento.RequestUnderstander.
func (m *Model) UnderstandRequest(ctx context.Context, in memento.UnderstandInput) (*memento.Understanding, error) {
	return ask(ctx, m, memento.ModelTaskUnderstand,
		func() (*memento.Understanding, error) { return m.primary.UnderstandRequest(ctx, in) },
		func() (*memento.Understanding, error) { return m.standIn.UnderstandRequest(ctx, in) })
}

// WorthRemembering implements memento.Sentinel.
func (m *Model) WorthRemembering(ctx context.Context, message string, schema []memento.AttributeSpec) (*memento.Verdict, error) {
	return ask(ctx, m, memento.ModelTaskSentinel,
		func() (*memento.Verdict, error) { return m.primary.WorthRemembering(ctx, message, schema) },
		func() (*memento.Verdict, error) { return m.standIn.WorthRemembering(ctx, message, schema) })
}

// ExtractFacts implements memento.FactExtractor.
func (m *Model) ExtractFacts(ctx context.Context, in memento.ExtractInput) ([]memento.Fact, error) {
	return ask(ctx, m, memento.ModelTaskExtractFacts,
		func() ([]memento.Fact, error) { return m.primary.ExtractFacts(ctx, in) },
		func() ([]memento.Fact, error) { return m.standIn.ExtractFacts(ctx, in) })
}

// ReviewExtraction implements memento.ExtractionReviewer.
func (m *Model) ReviewExtraction(ctx context.Context, message string, facts []memento.Fact) (*memento.Verdict, error) {
	return ask(ctx, m, memento.ModelTaskReviewExtraction,
		func() (*memento.Verdict, error) { return m.primary.ReviewExtraction(ctx, message, facts) },
		func() (*memento.Verdict, error) { return m.standIn.ReviewExtraction(ctx, message, facts) })
}

// AssignAttributes implements memento.Attributor.
func (m *Model) AssignAttributes(ctx context.Context, facts []memento.Fact, schema []memento.AttributeSpec) ([]memento.AttributedFact, error) {
	return ask(ctx, m, memento.ModelTaskAssignAttributes,
		func() ([]memento.AttributedFact, error) { return m.primary.AssignAttributes(ctx, facts, schema) },
		func() ([]memento.AttributedFact, error) { return m.standIn.AssignAttributes(ctx, facts, schema) })
}

// MergeFact implements memento.Aggregator.
func (m *Model) MergeFact(ctx context.Context, in memento.MergeInput) (string, error) {
	return ask(ctx, m, memento.ModelTaskMergeFact,
		func() (string, error) { return m.primary.MergeFact(ctx, in) },
		func() (string, error) { return m.standIn.MergeFact(ctx, in) })
}

// ReviewMerge implements memento.MergeReviewer.
func (m *Model) ReviewMerge(ctx context.Context, in memento.MergeInput, merged string) (*memento.Verdict, error) {
	return ask(ctx, m, memento.ModelTaskReviewMerge,
		func() (*memento.Verdict, error) { return m.primary.ReviewMerge(ctx, in, merged) },
		func() (*memento.Verdict, error) { return m.standIn.ReviewMerge(ctx, in, merged) })
}

// Summarise implements memento.Summariser.
func (m *Model) Summarise(ctx context.Context, in memento.SummariseInput) (string, error) {
	return ask(ctx, m, memento.ModelTaskSummarise,
		func() (string, error) { return m.primary.Summarise(ctx, in) },
		func() (string, error) { return m.standIn.Summarise(ctx, in) })
}

// ExtractPreferences implements memento.PreferenceExtractor.
func (m *Model) ExtractPreferences(ctx context.Context, message string) ([]memento.Concept, error) {
	return ask(ctx, m, memento.ModelTaskPreferences,
		func() ([]memento.Concept, error) { return m.primary.ExtractPreferences(ctx, message) },
		func() ([]memento.Concept, error) { return m.standIn.ExtractPreferences(ctx, message) })
}

// DescribeCluster implements memento.ClusterDescriber.
func (m *Model) DescribeCluster(ctx context.Context, members []memento.ClusterMember) (*memento.ClusterDescription, error) {
	return ask(ctx, m, memento.ModelTaskDescribeCluster,
		func() (*memento.ClusterDescription, error) { return m.primary.DescribeCluster(ctx, members) },
		func() (*memento.ClusterDescription, error) { return m.standIn.DescribeCluster(ctx, members) })
}

// WriteReply implements memento.ReplyWriter.
func (m *Model) WriteReply(ctx context.Context, in memento.ReplyInput) (string, error) {
	return ask(ctx, m, memento.ModelTaskWriteReply,
		func() (string, error) { return m.primary.WriteReply(ctx, in) },
		func() (string, error) { return m.standIn.WriteReply(ctx, in) })
}
