package recall

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// Threads is what the assembler reads of a thread.
type Threads interface {
	ThreadState(ctx context.Context, s memento.Scope, thread string) (*memento.ThreadState, error)
	LatestSummary(ctx context.Context, s memento.Scope, thread string) (*memento.Summary, error)
}

// Attributes lists the user's current memories; the assembler reads the
// semantic values.
type Attributes interface {
	Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error)
}

// Assembler builds everything a prompt needs about a user, with no
// language-model call: the thread's active context and latest summary,
// the user's current semantic attribute values, and the items its
// recallers bring back for the query, merged by score. It is itself a
// memento.Recaller (the merge), so recallers of other memories
// (preferences, profiles) plug in by being added to Recallers.
type Assembler struct {
	Threads    Threads
	Attributes Attributes
	Recallers  []memento.Recaller
	// Embedder embeds the query once for every recaller; nil leaves each
	// recaller to embed (or not) on its own.
	Embedder memento.Embedder
	Clock    memento.Clock
	// Index, when set, is the in-process index the recallers of New and
	// WithIndex read their candidates from (for its Stats).
	Index *Index
}

// New returns the assembler over a store with the two recallers of
// attribute memory (memories and past messages) and the given extra
// recallers. When the store can list what changed (memento.RecallCorpus,
// as the SQLite store does), the recallers read their candidates from an
// in-process Index over it with the default budget (see WithIndex).
func New(store AssemblerStore, e memento.Embedder, extra ...memento.Recaller) *Assembler {
	var idx *Index
	if c, ok := store.(memento.RecallCorpus); ok {
		idx = NewIndex(c, 0)
	}
	return WithIndex(store, idx, e, extra...)
}

// AssemblerStore is what an assembler reads of the store.
type AssemblerStore interface {
	Threads
	Attributes
	memento.RecallStore
}

// WithIndex is New with the recallers' candidates read from idx (an index
// over the same store), or from the store itself when idx is nil.
func WithIndex(store AssemblerStore, idx *Index, e memento.Embedder, extra ...memento.Recaller) *Assembler {
	var cands memento.RecallStore = store
	if idx != nil {
		cands = idx
	}
	rs := []memento.Recaller{&Memories{Store: cands, Embedder: e}, &Messages{Store: cands, Embedder: e}}
	return &Assembler{Threads: store, Attributes: store, Recallers: append(rs, extra...), Embedder: e, Index: idx}
}

// Tuned returns a copy of the assembler whose memory and message
// recallers (those of New and WithIndex) score with w; the other recallers
// and the index are shared. Evaluations use it to measure settings of the
// weights side by side on one store.
func (a *Assembler) Tuned(w Weights) *Assembler {
	b := *a
	b.Recallers = make([]memento.Recaller, len(a.Recallers))
	for i, r := range a.Recallers {
		switch r := r.(type) {
		case *Memories:
			c := *r
			c.Weights = w
			b.Recallers[i] = &c
		case *Messages:
			c := *r
			c.Weights = w
			b.Recallers[i] = &c
		default:
			b.Recallers[i] = r
		}
	}
	return &b
}

// Context is the assembled memory of a user for a prompt. Its JSON is the
// body of GET /v1/users/{user}/context.
type Context struct {
	User   string `json:"user"`
	Thread string `json:"thread,omitempty"`
	Query  string `json:"query"`
	// ActiveContext and Summary are the thread's, nil without a thread
	// (or a summary).
	ActiveContext *memento.ActiveContext `json:"activeContext"`
	Summary       *memento.Summary       `json:"summary"`
	// Attributes are the current semantic values, by attribute.
	Attributes []memento.Memory `json:"attributes"`
	// Items are the relevant memories and messages, best first, each with
	// its score breakdown and sources.
	Items []memento.RecallItem `json:"items"`
	// Text renders all of it for a prompt; Tokens estimates its length
	// (memento.EstimateTokens).
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
	// TookMS is how long the assembly took, in milliseconds.
	TookMS float64 `json:"tookMs"`
	// Withheld counts the texts left out because they carry instructions
	// to the model (package hygiene): recalled items, attribute values,
	// the summary and the active context's free text. Stored text should
	// never carry any; this is the last line that keeps it out of a
	// prompt when older or imported data does.
	Withheld int `json:"withheld"`
}

// instructs reports whether a text about to be rendered into a prompt
// carries instructions to the model. Everything rendered gets the rules
// of stored text, which include those of assistant turns: a recalled
// message may be the assistant's (its role does not travel with the
// item), and a summary or memory speaks for the system, not the user.
func instructs(text string) bool { return !hygiene.Stored(text) }

// Recall merges the items of every recaller: each is asked for twice q.K
// items, the union is ordered by score, a message and the memories drawn
// from it are counted once (see merge: an episode stands in for the
// message it was drawn from), and q.K are kept. Errors: EINVALID.
func (a *Assembler) Recall(ctx context.Context, q memento.RecallQuery) ([]memento.RecallItem, error) {
	items, _, err := a.recall(ctx, q)
	return items, err
}

// recall is Recall that also counts the items left out because their
// text carries instructions to the model.
func (a *Assembler) recall(ctx context.Context, q memento.RecallQuery) ([]memento.RecallItem, int, error) {
	if err := checkQuery(&q); err != nil {
		return nil, 0, err
	}
	if q.Scope.Tenant == "" {
		q.Scope.Tenant = memento.DefaultTenant
	}
	if a.Embedder != nil && q.Query != "" && q.Vector == nil {
		if vs, err := a.Embedder.Embed(ctx, []string{q.Query}); err == nil && len(vs) == 1 {
			q.Vector, q.Embedder = vs[0], a.Embedder.ID()
		}
	}
	wide := q
	wide.K = min(2*q.K, MaxK)
	// The recallers read different tables on different connections of
	// the store's read pool, so they run at once, and share one view of
	// the warm index (index.go).
	ctx = withView(ctx)
	results := make([][]memento.RecallItem, len(a.Recallers))
	errs := make([]error, len(a.Recallers))
	var wg sync.WaitGroup
	for i, r := range a.Recallers {
		wg.Go(func() { results[i], errs[i] = r.Recall(ctx, wide) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	var all []memento.RecallItem
	for _, items := range results {
		all = append(all, items...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Score > all[j].Score })
	out, withheld := merge(all, q.K)
	return out, withheld, nil
}

// standsIn reports whether a recalled memory is said in place of the
// message it was drawn from: an episode drawn from one message.
//
// Only episodes do: a semantic value drawn from one message is rendered
// among the user's attributes, not among the relevant memories (Render),
// so standing in for its message it would take the message out of that
// list; and it says what the user is, not what was said.
func standsIn(it memento.RecallItem) bool {
	return it.Kind == memento.RecallEpisode && len(it.Sources) == 1
}

// merge keeps the first k items of all (ordered by score, best first),
// each message and the memories drawn from it counted once, and returns
// how many it left out because their text instructs the model.
//
// An item is left out when better items already came from every message
// it came from. Only an item from one message says the same as that
// message, so only such an item hides later ones; a semantic value merged
// from many is hidden only when better items came from all of them. An
// episode drawn from one message is what the user's memory made of that
// message, so it stands in for the message: a message whose episode is
// recalled too is shown as its best such episode, in the message's place
// and with its score when that is the better.
func merge(all []memento.RecallItem, k int) ([]memento.RecallItem, int) {
	// The best episode standing in for each message.
	episode := map[string]int{}
	for i, it := range all {
		if standsIn(it) {
			if _, ok := episode[it.Sources[0]]; !ok {
				episode[it.Sources[0]] = i
			}
		}
	}
	covered := map[string]bool{}
	out := make([]memento.RecallItem, 0, k)
	withheld := 0
	for _, it := range all {
		if len(out) == k {
			break
		}
		if j, ok := episode[it.ID]; ok && it.Kind == memento.RecallMessage && !covered[it.ID] {
			if e := all[j]; !instructs(e.Text) {
				e.Score = max(e.Score, it.Score)
				it = e
			}
		}
		if instructs(it.Text) {
			withheld++
			continue
		}
		if len(it.Sources) > 0 && allIn(it.Sources, covered) {
			continue
		}
		if len(it.Sources) == 1 {
			covered[it.Sources[0]] = true
		}
		out = append(out, it)
	}
	return out, withheld
}

// allIn reports whether every id is in set.
func allIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// Assemble builds the context of q. Errors: EINVALID.
func (a *Assembler) Assemble(ctx context.Context, q memento.RecallQuery) (*Context, error) {
	start := time.Now()
	if a.Clock != nil && q.Now.IsZero() {
		q.Now = a.Clock.Now()
	}
	if err := checkQuery(&q); err != nil {
		return nil, err
	}
	out := &Context{User: q.Scope.User, Thread: q.Thread, Query: q.Query, Attributes: []memento.Memory{}}
	// The thread's state and the attributes are read while the recallers
	// run.
	var wg sync.WaitGroup
	var threadErr, attrErr error
	if q.Thread != "" && a.Threads != nil {
		wg.Go(func() {
			st, err := a.Threads.ThreadState(ctx, q.Scope, q.Thread)
			if err != nil {
				threadErr = err
				return
			}
			ac := st.Context
			out.ActiveContext = &ac
			out.Summary, threadErr = a.Threads.LatestSummary(ctx, q.Scope, q.Thread)
		})
	}
	if a.Attributes != nil {
		wg.Go(func() {
			attrs, err := a.Attributes.Memories(ctx, q.Scope, memento.MemoryFilter{Mode: memento.ModeSemantic})
			if err == nil && attrs != nil {
				out.Attributes = attrs
			}
			attrErr = err
		})
	}
	items, withheld, err := a.recall(ctx, q)
	wg.Wait()
	if err = errors.Join(err, threadErr, attrErr); err != nil {
		return nil, fmt.Errorf("assemble context: %w", err)
	}
	out.Items = items
	out.Withheld = withheld + withhold(out)
	out.Text = Render(out)
	out.Tokens = memento.EstimateTokens(out.Text)
	out.TookMS = float64(time.Since(start).Microseconds()) / 1000
	return out, nil
}

// withhold removes from c the thread and attribute texts that carry
// instructions to the model and returns how many it removed.
func withhold(c *Context) int {
	n := 0
	if c.Summary != nil && instructs(c.Summary.Text) {
		c.Summary = nil
		n++
	}
	if c.ActiveContext != nil && c.ActiveContext.FreeText != "" && instructs(c.ActiveContext.FreeText) {
		ac := *c.ActiveContext
		ac.FreeText = ""
		c.ActiveContext = &ac
		n++
	}
	kept := c.Attributes[:0]
	for _, m := range c.Attributes {
		if instructs(m.Value) {
			n++
			continue
		}
		kept = append(kept, m)
	}
	c.Attributes = kept
	return n
}

// Render writes a context as the text block a prompt holds: the thread's
// constraints and summary, what the user has said about themselves, and
// the relevant memories and messages with their dates.
func Render(c *Context) string {
	var b strings.Builder
	if c.ActiveContext != nil && c.ActiveContext.HasConstraints() {
		b.WriteString("Current request: " + describe(*c.ActiveContext) + "\n")
	}
	if c.Summary != nil && strings.TrimSpace(c.Summary.Text) != "" {
		b.WriteString("Summary of this conversation: " + strings.TrimSpace(c.Summary.Text) + "\n")
	}
	if len(c.Attributes) > 0 {
		b.WriteString("What the user has said about themselves:\n")
		for _, m := range c.Attributes {
			fmt.Fprintf(&b, "- %s: %s\n", m.Attribute, m.Value)
		}
	}
	var rel []memento.RecallItem
	for _, it := range c.Items {
		if it.Kind != memento.RecallAttribute || len(c.Attributes) == 0 {
			rel = append(rel, it)
		}
	}
	if len(rel) > 0 {
		b.WriteString("Relevant memories:\n")
		for _, it := range rel {
			date := ""
			if it.At != nil && !it.At.IsZero() {
				date = it.At.Format("2 Jan 2006") + ", "
			}
			fmt.Fprintf(&b, "- (%s%s) %s\n", date, it.Kind, oneLine(it.Text))
		}
	}
	return b.String()
}

// describe renders an active context's constraints briefly.
func describe(ac memento.ActiveContext) string {
	var parts []string
	if len(ac.Genres) > 0 {
		parts = append(parts, "genres "+strings.Join(ac.Genres, ", "))
	}
	if ac.TitleType != "" {
		parts = append(parts, "type "+ac.TitleType)
	}
	if ac.MinYear != nil {
		parts = append(parts, fmt.Sprintf("from %d", *ac.MinYear))
	}
	if ac.MaxYear != nil {
		parts = append(parts, fmt.Sprintf("up to %d", *ac.MaxYear))
	}
	if len(ac.People) > 0 {
		parts = append(parts, "with "+strings.Join(ac.People, ", "))
	}
	if ac.FreeText != "" {
		parts = append(parts, "about "+ac.FreeText)
	}
	if n := len(ac.ExcludedTitleIDs); n > 0 {
		parts = append(parts, fmt.Sprintf("%d titles excluded", n))
	}
	return strings.Join(parts, "; ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
