// Package budget keeps each tenant's use of a paid language model within
// a daily token budget. Model wraps the model a server talks to (the
// OpenAI-compatible one, behind its fallback) and, for every task, charges
// the call and its tokens to the tenant the work is for
// (memento.TenantFrom: the HTTP server marks each request, the job queue
// each job). Once a tenant's tokens of the day reach its budget, its calls
// go to the stand-in (the offline model) until midnight UTC: the pipeline
// and the agent keep working, and a note (memento.AddNote) tells the
// turn's reader or the pipeline's run trace that the rules answered.
//
// Calls, tokens and budget fallbacks are counted per tenant in Prometheus
// (memento_llm_tenant_calls_total, memento_llm_tenant_tokens_total,
// memento_llm_budget_fallbacks_total). The tokens are the ones the model
// server reports (memento.CountTokens); the counts live in the process, so
// several servers sharing a store each keep their own budget, and a
// restart starts the day's count again.
package budget

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
)

// Options configure a Model.
type Options struct {
	// DailyTokens is every tenant's budget of tokens (prompt and
	// completion) a day; zero or less is no budget, only counting.
	DailyTokens int64
	// Tenants overrides DailyTokens for some tenants (0: no budget).
	Tenants map[string]int64
	// DefaultTenant is charged for calls whose context names no tenant
	// (commands run by an operator); empty takes memento.DefaultTenant.
	DefaultTenant string
	Logger        *slog.Logger
	// Registerer, when set, exposes the per-tenant counters.
	Registerer prometheus.Registerer
	// Now is the clock the day is read from; nil is time.Now.
	Now func() time.Time
}

// Usage is one tenant's use of the model on one day.
type Usage struct {
	Day              string `json:"day"`
	Calls            int64  `json:"calls"`
	PromptTokens     int64  `json:"promptTokens"`
	CompletionTokens int64  `json:"completionTokens"`
	// Fallbacks are calls the stand-in answered because the budget was
	// used up.
	Fallbacks int64 `json:"fallbacks"`
}

// Tokens is the usage's prompt and completion tokens together.
func (u Usage) Tokens() int64 { return u.PromptTokens + u.CompletionTokens }

// Model is a memento.LanguageModel that charges each call to its tenant
// and answers with a stand-in past the tenant's daily budget. Methods it
// does not wrap (tasks added later) go to the primary uncharged. It is
// safe for concurrent use when both models are.
type Model struct {
	memento.LanguageModel
	standIn memento.LanguageModel
	opts    Options

	calls, fallbacks *prometheus.CounterVec
	tokens           *prometheus.CounterVec

	mu   sync.Mutex
	day  string
	used map[string]*Usage
}

var _ memento.LanguageModel = (*Model)(nil)

// New returns a Model over primary with standIn for tenants past their
// budget. Errors: EINVALID when a model is missing or a budget is
// negative, and what registering the metrics returns.
func New(primary, standIn memento.LanguageModel, opts Options) (*Model, error) {
	if primary == nil || standIn == nil {
		return nil, memento.Errorf(memento.EINVALID, "budget: a primary model and a stand-in are required")
	}
	if opts.DailyTokens < 0 {
		return nil, memento.Errorf(memento.EINVALID, "the daily token budget must not be negative, got %d", opts.DailyTokens)
	}
	for t, n := range opts.Tenants {
		if n < 0 {
			return nil, memento.Errorf(memento.EINVALID, "the daily token budget of tenant %q must not be negative, got %d", t, n)
		}
	}
	if opts.DefaultTenant == "" {
		opts.DefaultTenant = memento.DefaultTenant
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Model{
		LanguageModel: primary, standIn: standIn, opts: opts, used: map[string]*Usage{},
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memento_llm_tenant_calls_total", Help: "Language-model task calls sent to the model server, by tenant.",
		}, []string{"tenant"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memento_llm_tenant_tokens_total", Help: "Tokens the model server reported, by tenant and kind (prompt or completion).",
		}, []string{"tenant", "kind"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memento_llm_budget_fallbacks_total", Help: "Language-model task calls the offline model answered because the tenant's daily token budget was used up, by tenant.",
		}, []string{"tenant"}),
	}
	if r := opts.Registerer; r != nil {
		for _, c := range []prometheus.Collector{m.calls, m.tokens, m.fallbacks} {
			if err := r.Register(c); err != nil {
				return nil, fmt.Errorf("register budget metrics: %w", err)
			}
		}
	}
	return m, nil
}

// Primary returns the model the budget is spent on.
func (m *Model) Primary() memento.LanguageModel { return m.LanguageModel }

// Budget returns tenant's daily token budget; 0 is none.
func (m *Model) Budget(tenant string) int64 {
	if n, ok := m.opts.Tenants[tenant]; ok {
		return n
	}
	return max(m.opts.DailyTokens, 0)
}

// Usage returns tenant's use of the model today.
func (m *Model) Usage(tenant string) Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return *m.usage(tenant)
}

// usage returns tenant's counters of today, starting a new day when the
// date changed; m.mu is held.
func (m *Model) usage(tenant string) *Usage {
	day := m.opts.Now().UTC().Format(time.DateOnly)
	if day != m.day {
		m.day, m.used = day, map[string]*Usage{}
	}
	u := m.used[tenant]
	if u == nil {
		u = &Usage{Day: day}
		m.used[tenant] = u
	}
	return u
}

func (m *Model) tenant(ctx context.Context) string {
	if t, ok := memento.TenantFrom(ctx); ok {
		return t
	}
	return m.opts.DefaultTenant
}

// Note is the note a call answered by the stand-in past tenant's budget
// leaves, as memento.Notes returns it.
func Note(tenant, task string, budget int64) string {
	return fmt.Sprintf("Tenant %q has used its daily language-model budget of %d tokens, so the built-in rules did the %s step instead; the budget renews at 00:00 UTC.", tenant, budget, task)
}

// spend reports whether tenant may call the primary now, and counts a
// fallback when it may not.
func (m *Model) spend(tenant string) (ok bool, budget int64) {
	budget = m.Budget(tenant)
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.usage(tenant)
	if budget > 0 && u.Tokens() >= budget {
		u.Fallbacks++
		return false, budget
	}
	u.Calls++
	return true, budget
}

// charge adds a finished call's tokens to tenant.
func (m *Model) charge(tenant string, prompt, completion int64) {
	m.mu.Lock()
	u := m.usage(tenant)
	u.PromptTokens += prompt
	u.CompletionTokens += completion
	m.mu.Unlock()
	m.tokens.WithLabelValues(tenant, "prompt").Add(float64(prompt))
	m.tokens.WithLabelValues(tenant, "completion").Add(float64(completion))
}

// call runs one task on the primary, charged to the tenant, or on the
// stand-in past the tenant's budget.
func call[T any](ctx context.Context, m *Model, task string, primary, standIn func(context.Context) (T, error)) (T, error) {
	tenant := m.tenant(ctx)
	ok, budget := m.spend(tenant)
	if !ok {
		m.fallbacks.WithLabelValues(tenant).Inc()
		m.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "tenant's language-model budget is used up; the offline model answers",
			slog.String("tenant", tenant), slog.String("task", task), slog.Int64("budget", budget))
		out, err := standIn(ctx)
		if err == nil {
			memento.AddNote(ctx, Note(tenant, task, budget))
		}
		return out, err
	}
	m.calls.WithLabelValues(tenant).Inc()
	mctx, meter := memento.WithTokenMeter(ctx)
	out, err := primary(mctx)
	p, c := meter.Tokens()
	m.charge(tenant, p, c)
	return out, err
}

// UnderstandRequest implements memento.RequestUnderstander.
func (m *Model) UnderstandRequest(ctx context.Context, in memento.UnderstandInput) (*memento.Understanding, error) {
	return call(ctx, m, memento.ModelTaskUnderstand,
		func(ctx context.Context) (*memento.Understanding, error) {
			return m.LanguageModel.UnderstandRequest(ctx, in)
		},
		func(ctx context.Context) (*memento.Understanding, error) { return m.standIn.UnderstandRequest(ctx, in) })
}

// WorthRemembering implements memento.Sentinel.
func (m *Model) WorthRemembering(ctx context.Context, message string, schema []memento.AttributeSpec) (*memento.Verdict, error) {
	return call(ctx, m, memento.ModelTaskSentinel,
		func(ctx context.Context) (*memento.Verdict, error) {
			return m.LanguageModel.WorthRemembering(ctx, message, schema)
		},
		func(ctx context.Context) (*memento.Verdict, error) {
			return m.standIn.WorthRemembering(ctx, message, schema)
		})
}

// ExtractFacts implements memento.FactExtractor.
func (m *Model) ExtractFacts(ctx context.Context, in memento.ExtractInput) ([]memento.Fact, error) {
	return call(ctx, m, memento.ModelTaskExtractFacts,
		func(ctx context.Context) ([]memento.Fact, error) { return m.LanguageModel.ExtractFacts(ctx, in) },
		func(ctx context.Context) ([]memento.Fact, error) { return m.standIn.ExtractFacts(ctx, in) })
}

// ReviewExtraction implements memento.ExtractionReviewer.
func (m *Model) ReviewExtraction(ctx context.Context, message string, facts []memento.Fact) (*memento.Verdict, error) {
	return call(ctx, m, memento.ModelTaskReviewExtraction,
		func(ctx context.Context) (*memento.Verdict, error) {
			return m.LanguageModel.ReviewExtraction(ctx, message, facts)
		},
		func(ctx context.Context) (*memento.Verdict, error) {
			return m.standIn.ReviewExtraction(ctx, message, facts)
		})
}

// AssignAttributes implements memento.Attributor.
func (m *Model) AssignAttributes(ctx context.Context, facts []memento.Fact, schema []memento.AttributeSpec) ([]memento.AttributedFact, error) {
	return call(ctx, m, memento.ModelTaskAssignAttributes,
		func(ctx context.Context) ([]memento.AttributedFact, error) {
			return m.LanguageModel.AssignAttributes(ctx, facts, schema)
		},
		func(ctx context.Context) ([]memento.AttributedFact, error) {
			return m.standIn.AssignAttributes(ctx, facts, schema)
		})
}

// MergeFact implements memento.Aggregator.
func (m *Model) MergeFact(ctx context.Context, in memento.MergeInput) (string, error) {
	return call(ctx, m, memento.ModelTaskMergeFact,
		func(ctx context.Context) (string, error) { return m.LanguageModel.MergeFact(ctx, in) },
		func(ctx context.Context) (string, error) { return m.standIn.MergeFact(ctx, in) })
}

// ReviewMerge implements memento.MergeReviewer.
func (m *Model) ReviewMerge(ctx context.Context, in memento.MergeInput, merged string) (*memento.Verdict, error) {
	return call(ctx, m, memento.ModelTaskReviewMerge,
		func(ctx context.Context) (*memento.Verdict, error) {
			return m.LanguageModel.ReviewMerge(ctx, in, merged)
		},
		func(ctx context.Context) (*memento.Verdict, error) { return m.standIn.ReviewMerge(ctx, in, merged) })
}

// Summarise implements memento.Summariser.
func (m *Model) Summarise(ctx context.Context, in memento.SummariseInput) (string, error) {
	return call(ctx, m, memento.ModelTaskSummarise,
		func(ctx context.Context) (string, error) { return m.LanguageModel.Summarise(ctx, in) },
		func(ctx context.Context) (string, error) { return m.standIn.Summarise(ctx, in) })
}

// ExtractPreferences implements memento.PreferenceExtractor.
func (m *Model) ExtractPreferences(ctx context.Context, message string) ([]memento.Concept, error) {
	return call(ctx, m, memento.ModelTaskPreferences,
		func(ctx context.Context) ([]memento.Concept, error) {
			return m.LanguageModel.ExtractPreferences(ctx, message)
		},
		func(ctx context.Context) ([]memento.Concept, error) {
			return m.standIn.ExtractPreferences(ctx, message)
		})
}

// DescribeCluster implements memento.ClusterDescriber.
func (m *Model) DescribeCluster(ctx context.Context, members []memento.ClusterMember) (*memento.ClusterDescription, error) {
	return call(ctx, m, memento.ModelTaskDescribeCluster,
		func(ctx context.Context) (*memento.ClusterDescription, error) {
			return m.LanguageModel.DescribeCluster(ctx, members)
		},
		func(ctx context.Context) (*memento.ClusterDescription, error) {
			return m.standIn.DescribeCluster(ctx, members)
		})
}

// WriteReply implements memento.ReplyWriter.
func (m *Model) WriteReply(ctx context.Context, in memento.ReplyInput) (string, error) {
	return call(ctx, m, memento.ModelTaskWriteReply,
		func(ctx context.Context) (string, error) { return m.LanguageModel.WriteReply(ctx, in) },
		func(ctx context.Context) (string, error) { return m.standIn.WriteReply(ctx, in) })
}

// The tasks outside memento.LanguageModel that a model server may also
// do (reading actions, tagging emotions) are charged like the others when
// the primary does them; a primary without them leaves them to the
// stand-in, uncharged, as the engine would without the budget.

// ReadActions implements memento.ActionReader.
func (m *Model) ReadActions(ctx context.Context, in memento.ActionInput) ([]memento.ReportedAction, error) {
	standIn, ok := m.standIn.(memento.ActionReader)
	if !ok {
		return nil, memento.Errorf(memento.EINTERNAL, "budget: the stand-in model cannot read actions")
	}
	primary, ok := m.LanguageModel.(memento.ActionReader)
	if !ok {
		return standIn.ReadActions(ctx, in)
	}
	return call(ctx, m, memento.ModelTaskReadActions,
		func(ctx context.Context) ([]memento.ReportedAction, error) { return primary.ReadActions(ctx, in) },
		func(ctx context.Context) ([]memento.ReportedAction, error) { return standIn.ReadActions(ctx, in) })
}

// ClassifyEmotion implements memento.EmotionClassifier.
func (m *Model) ClassifyEmotion(ctx context.Context, text string) (*memento.Emotion, error) {
	standIn, ok := m.standIn.(memento.EmotionClassifier)
	if !ok {
		return nil, memento.Errorf(memento.EINTERNAL, "budget: the stand-in model cannot tag emotions")
	}
	primary, ok := m.LanguageModel.(memento.EmotionClassifier)
	if !ok {
		return standIn.ClassifyEmotion(ctx, text)
	}
	return call(ctx, m, "classify_emotion",
		func(ctx context.Context) (*memento.Emotion, error) { return primary.ClassifyEmotion(ctx, text) },
		func(ctx context.Context) (*memento.Emotion, error) { return standIn.ClassifyEmotion(ctx, text) })
}
