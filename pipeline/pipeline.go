package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
)

// GraphName names the pipeline's graph; checkpoint keys start with it.
const GraphName = "remember"

// Nodes of the pipeline's graph, in the order a full run visits them.
const (
	NodeHygiene          = "hygiene"
	NodeSentinel         = "sentinel"
	NodeExtract          = "extract"
	NodeReviewExtraction = "review_extraction"
	NodeAttribute        = "attribute"
	NodeAggregate        = "aggregate"
	NodeReviewMerge      = "review_merge"
	NodeStore            = "store"
)

// Defaults of Options.
const (
	DefaultMaxRepairs      = 3
	DefaultMaxConflicts    = 5
	DefaultCheckpointAfter = 20 * time.Millisecond
)

// Model is what the pipeline asks of a language model: the six tasks of
// attribute memory. Both providers (llm/offline, llm/openai) implement it.
type Model interface {
	memento.Sentinel
	memento.FactExtractor
	memento.ExtractionReviewer
	memento.Attributor
	memento.Aggregator
	memento.MergeReviewer
}

// Store is what the pipeline reads and writes. *sqlite.DB implements it.
type Store interface {
	memento.MemoryWriter
	// MessageByID returns a stored message. Errors: ENOTFOUND.
	MessageByID(ctx context.Context, s memento.Scope, id string) (*memento.Message, error)
	// Memories lists memories; the pipeline reads the current semantic
	// values.
	Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error)
	// MemoryModes returns the user's mode overrides.
	MemoryModes(ctx context.Context, s memento.Scope) (map[string]string, error)
	// MemoryRun returns the recorded run over a message. Errors: ENOTFOUND.
	MemoryRun(ctx context.Context, s memento.Scope, message string) (*memento.MemoryRun, error)
	// Checkpointer returns the durable checkpointer of a user's runs.
	Checkpointer(s memento.Scope) graph.Checkpointer
}

// Options configure a Pipeline. The zero value works.
type Options struct {
	// Schema is the attribute schema; zero means DefaultSchema.
	Schema memento.Schema
	// MaxRepairs bounds each repair loop: the extractor and the
	// aggregator get at most this many more attempts after their
	// reviewer's first rejection. 0 means DefaultMaxRepairs; a negative
	// value allows none.
	MaxRepairs int
	// MaxConflicts bounds how often a run re-merges after another run
	// changed an attribute it merged into. 0 means DefaultMaxConflicts.
	MaxConflicts int
	// Embedder embeds each message and each new memory for recall; nil
	// stores no vectors.
	Embedder memento.Embedder
	// CheckpointAfter is how much work a run may lose to a crash: a
	// node's result is saved durably once this long has passed since the
	// run started or was last saved, so slow model calls are always
	// checkpointed and a run of fast offline steps costs no extra
	// writes. 0 means DefaultCheckpointAfter; a negative value saves
	// after every node.
	CheckpointAfter time.Duration
	// Hygiene refuses instruction text; nil uses NewHygiene().
	Hygiene *Hygiene
	// Clock stamps the trace; nil is the system clock.
	Clock memento.Clock
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Pipeline is the attribute-memory pipeline: hygiene, sentinel, extractor,
// extractor reviewer (repair loop), attributor, aggregator and aggregator
// reviewer (repair loop), then one write of everything the run learned.
// It is safe for concurrent use by runs of different messages.
type Pipeline struct {
	model  Model
	store  Store
	opts   Options
	schema memento.Schema
	attrs  map[string]memento.AttributeSpec
	graph  *graph.Graph[State]
	clock  memento.Clock
	log    *slog.Logger
}

// New builds the pipeline. Errors: EINVALID for a bad schema or a graph
// that does not compile.
func New(model Model, store Store, opts Options) (*Pipeline, error) {
	if model == nil || store == nil {
		return nil, memento.Errorf(memento.EINVALID, "the pipeline needs a model and a store")
	}
	if len(opts.Schema.Attributes) == 0 {
		opts.Schema = DefaultSchema()
	}
	if err := opts.Schema.Validate(); err != nil {
		return nil, err
	}
	switch {
	case opts.MaxRepairs == 0:
		opts.MaxRepairs = DefaultMaxRepairs
	case opts.MaxRepairs < 0:
		opts.MaxRepairs = 0
	}
	if opts.MaxConflicts <= 0 {
		opts.MaxConflicts = DefaultMaxConflicts
	}
	if opts.CheckpointAfter == 0 {
		opts.CheckpointAfter = DefaultCheckpointAfter
	}
	if opts.Hygiene == nil {
		opts.Hygiene = NewHygiene()
	}
	p := &Pipeline{model: model, store: store, opts: opts, clock: opts.Clock, log: opts.Logger,
		attrs: map[string]memento.AttributeSpec{}}
	if p.clock == nil {
		p.clock = memento.SystemClock{}
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.schema = opts.Schema
	for i, a := range p.schema.Attributes {
		a.Name = strings.ToUpper(a.Name)
		p.schema.Attributes[i] = a
		p.attrs[a.Name] = a
	}
	p.graph = p.build()
	if _, err := p.graph.Compile(p.compileOptions(nil)...); err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "the pipeline graph does not compile: %v", err)
	}
	return p, nil
}

// Schema returns the schema the pipeline sorts facts into.
func (p *Pipeline) Schema() memento.Schema { return p.schema }

// stepLimit allows every node its repair rounds and conflict retries.
func (p *Pipeline) stepLimit() int {
	rounds := p.opts.MaxRepairs + 1
	return 4 + 2*rounds + (1+p.opts.MaxConflicts)*(2*rounds+1) + 2
}

func (p *Pipeline) compileOptions(cp graph.Checkpointer) []graph.Option {
	opts := []graph.Option{graph.WithStepLimit(p.stepLimit()), graph.WithClock(p.clock)}
	if cp != nil {
		opts = append(opts, graph.WithCheckpointer(cp))
	}
	return opts
}

// build declares the graph. Each node sets State.Next; one router per node
// reads it, and the declared targets say where each node may lead.
func (p *Pipeline) build() *graph.Graph[State] {
	g := graph.New[State](GraphName)
	next := graph.RouteBy(func(s State) string { return s.Next })
	g.AddNode(NodeHygiene, p.node(NodeHygiene, p.hygiene))
	g.AddNode(NodeSentinel, p.node(NodeSentinel, p.sentinel))
	g.AddNode(NodeExtract, p.node(NodeExtract, p.extract))
	g.AddNode(NodeReviewExtraction, p.node(NodeReviewExtraction, p.reviewExtraction))
	g.AddNode(NodeAttribute, p.node(NodeAttribute, p.attribute))
	g.AddNode(NodeAggregate, p.node(NodeAggregate, p.aggregate))
	g.AddNode(NodeReviewMerge, p.node(NodeReviewMerge, p.reviewMerge))
	g.AddNode(NodeStore, p.node(NodeStore, p.write))
	g.AddEdge(graph.Start, NodeHygiene)
	g.AddConditionalEdges(NodeHygiene, next, NodeSentinel, NodeStore)
	g.AddConditionalEdges(NodeSentinel, next, NodeExtract, NodeStore)
	g.AddEdge(NodeExtract, NodeReviewExtraction)
	g.AddConditionalEdges(NodeReviewExtraction, next, NodeExtract, NodeAttribute, NodeStore)
	g.AddConditionalEdges(NodeAttribute, next, NodeAggregate, NodeStore)
	g.AddEdge(NodeAggregate, NodeReviewMerge)
	g.AddConditionalEdges(NodeReviewMerge, next, NodeAggregate, NodeStore)
	g.AddConditionalEdges(NodeStore, next, NodeAggregate, graph.End)
	return g
}

// State is what flows through the graph for one message. It is
// checkpointed as JSON, so every field that matters is exported.
type State struct {
	Tenant  string          `json:"tenant"`
	User    string          `json:"user"`
	Message memento.Message `json:"message"`
	// Asked is the agent's turn just before the message, and Summary the
	// thread's latest summary of earlier messages: what the extractor
	// reads the message in (see readConversation).
	Asked   string `json:"asked,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Next is the node the current node chose.
	Next    string    `json:"next"`
	Started time.Time `json:"started"`
	Outcome string    `json:"outcome,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	// Rejected are hygiene's reasons, for the message or for facts.
	Rejected []string `json:"rejected,omitempty"`
	// Facts is the latest extraction; Rounds counts extractions and Note
	// is the extraction reviewer's latest repair note.
	Facts  []memento.Fact `json:"facts,omitempty"`
	Rounds int            `json:"rounds,omitempty"`
	Note   string         `json:"note,omitempty"`
	// Dropped counts facts not stored.
	Dropped int `json:"dropped,omitempty"`
	// Modes are the effective modes by attribute for this user.
	Modes map[string]string `json:"modes,omitempty"`
	// Episodes are facts for episodic attributes; Merges the steps of
	// merging facts into semantic values, in order per attribute.
	Episodes []Episode   `json:"episodes,omitempty"`
	Merges   []MergeStep `json:"merges,omitempty"`
	// MergeRounds counts aggregator passes.
	MergeRounds int `json:"mergeRounds,omitempty"`
	// Bases are the current semantic values read when aggregating, by
	// attribute; nil until read (and again after a conflict).
	Bases map[string]Base `json:"bases,omitempty"`
	// Sweep holds what the new facts supersede in other semantic
	// attributes; Swept is true once it was computed against Bases.
	Sweep []Retraction `json:"sweep,omitempty"`
	Swept bool         `json:"swept,omitempty"`
	// Conflicts counts writes refused because a base changed.
	Conflicts int `json:"conflicts,omitempty"`
	// Steps is the run's trace as the run record shows it.
	Steps []memento.RunStep `json:"steps,omitempty"`
	// Run is the record the store node wrote (or found).
	Run *memento.MemoryRun `json:"run,omitempty"`
}

// Episode is a fact for an episodic attribute.
type Episode struct {
	Attribute string       `json:"attribute"`
	Fact      memento.Fact `json:"fact"`
}

// MergeStep is one fact merged into a semantic attribute's value.
type MergeStep struct {
	Attribute string       `json:"attribute"`
	Fact      memento.Fact `json:"fact"`
	Before    string       `json:"before"`
	After     string       `json:"after"`
	// Merged is true once After is computed for Before; Accepted once the
	// reviewer passed it.
	Merged   bool `json:"merged,omitempty"`
	Accepted bool `json:"accepted,omitempty"`
	// Note is the reviewer's repair note on the last attempt.
	Note string `json:"note,omitempty"`
}

// Base is the current value of a semantic attribute.
type Base struct {
	ID      string   `json:"id"`
	Value   string   `json:"value"`
	Sources []string `json:"sources"`
}

// Retraction is what a new fact supersedes in the value of another
// semantic attribute: the remaining value ("" retracts it whole).
type Retraction struct {
	Attribute string       `json:"attribute"`
	Fact      memento.Fact `json:"fact"`
	Removed   []string     `json:"removed"`
	Value     string       `json:"value"`
}

// node wraps a step so it records itself in the run's trace, with the
// notes its model calls left (the offline model standing in for an
// unusable answer, say).
func (p *Pipeline) node(name string, fn func(ctx context.Context, s *State) (outcome, detail string, err error)) graph.NodeFunc[State] {
	return func(ctx context.Context, s State) (State, error) {
		start := p.clock.Now()
		s.Steps = slices.Clone(s.Steps)
		ctx = memento.WithNotes(ctx)
		outcome, detail, err := fn(ctx, &s)
		if err != nil {
			return s, err
		}
		s.Steps = append(s.Steps, memento.RunStep{Node: name, Started: start, Duration: p.clock.Now().Sub(start), Outcome: outcome, Detail: detail, Notes: memento.Notes(ctx)})
		return s, nil
	}
}

// Process runs the pipeline over one stored message of the user, unless
// its run is recorded already, in which case the recorded run is returned
// and nothing runs (a message processed twice creates nothing new). A run
// interrupted by a crash or a failing step resumes from its checkpoint.
// Errors: ENOTFOUND when the message does not exist, EUNAVAILABLE and
// others from the model (the job retries).
func (p *Pipeline) Process(ctx context.Context, s memento.Scope, messageID string) (*memento.MemoryRun, error) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	if run, err := p.store.MemoryRun(ctx, s, messageID); err == nil {
		return run, nil
	} else if memento.ErrorCode(err) != memento.ENOTFOUND {
		return nil, fmt.Errorf("remember %s: %w", messageID, err)
	}
	msg, err := p.store.MessageByID(ctx, s, messageID)
	if err != nil {
		return nil, fmt.Errorf("remember %s: %w", messageID, err)
	}
	return p.Run(ctx, s, *msg)
}

// ProcessMessage is Process for a message the caller has read already (a
// batch reads its messages together): it runs the pipeline over msg
// unless its run is recorded, in which case it returns that run.
// Errors: as Process.
func (p *Pipeline) ProcessMessage(ctx context.Context, s memento.Scope, msg memento.Message) (*memento.MemoryRun, error) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	if run, err := p.store.MemoryRun(ctx, s, msg.ID); err == nil {
		return run, nil
	} else if memento.ErrorCode(err) != memento.ENOTFOUND {
		return nil, fmt.Errorf("remember %s: %w", msg.ID, err)
	}
	return p.Run(ctx, s, msg)
}

// Run runs the pipeline over a message that is stored already (the write
// refers to it), without first looking up whether it was processed: the
// write still refuses to store a run twice. Process is the entry point of
// jobs; Run serves benchmarks and tests that hold the message.
func (p *Pipeline) Run(ctx context.Context, s memento.Scope, msg memento.Message) (*memento.MemoryRun, error) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	cp := &throttled{inner: p.store.Checkpointer(s), after: p.opts.CheckpointAfter, clock: p.clock, last: p.clock.Now()}
	r, err := p.graph.Compile(p.compileOptions(cp)...)
	if err != nil {
		return nil, fmt.Errorf("remember %s: %w", msg.ID, err)
	}
	res, err := r.Run(ctx, msg.ID, State{Tenant: s.Tenant, User: s.User, Message: msg, Started: p.clock.Now()})
	if err != nil {
		return nil, fmt.Errorf("remember %s: %w", msg.ID, err)
	}
	if res.State.Run == nil {
		return nil, fmt.Errorf("remember %s: the run ended without a record", msg.ID)
	}
	return res.State.Run, nil
}

func (s *State) scope() memento.Scope { return memento.Scope{Tenant: s.Tenant, User: s.User} }

// sentinel asks whether anything in the message is worth remembering.
func (p *Pipeline) sentinel(ctx context.Context, s *State) (string, string, error) {
	v, err := p.model.WorthRemembering(ctx, s.Message.Text, p.schema.Attributes)
	if err != nil {
		return "", "", fmt.Errorf("sentinel: %w", err)
	}
	if q := question(s.Asked); !v.OK && q != "" && asksAboutUser(q) {
		// The sentinel reads the message alone, and an answer alone
		// ("Mostly Netflix") says little; the extractor reads it with
		// the question and decides.
		s.Next = NodeExtract
		return "answer", v.Reason + "; the message answers the agent's question, so the extractor reads it with the question", nil
	}
	if !v.OK {
		s.Outcome, s.Reason, s.Next = memento.RunNothing, "sentinel: "+v.Reason, NodeStore
		return "nothing", v.Reason, nil
	}
	s.Next = NodeExtract
	return "worth", v.Reason, nil
}

// extract lists the facts, with the reviewer's note on a repair round.
func (p *Pipeline) extract(ctx context.Context, s *State) (string, string, error) {
	facts, err := p.model.ExtractFacts(ctx, memento.ExtractInput{Message: s.Message.Text, Previous: s.Facts, RepairNote: s.Note,
		Asked: s.Asked, Summary: s.Summary})
	if err != nil {
		return "", "", fmt.Errorf("extract: %w", err)
	}
	s.Rounds++
	kept := make([]memento.Fact, 0, len(facts))
	for _, f := range facts {
		f.Text = strings.TrimSpace(f.Text)
		if f.Text == "" {
			continue
		}
		if reasons := p.opts.Hygiene.Check(f.Text); len(reasons) > 0 {
			s.Rejected = append(s.Rejected, fmt.Sprintf("fact %q: %s", f.Text, strings.Join(reasons, "; ")))
			continue
		}
		kept = append(kept, f)
	}
	s.Facts = kept
	outcome := "ok"
	if s.Rounds > 1 {
		outcome = "repaired"
	}
	return outcome, fmt.Sprintf("round %d: %s", s.Rounds, factList(kept)), nil
}

// reviewExtraction accepts the facts or sends them back with a note.
func (p *Pipeline) reviewExtraction(ctx context.Context, s *State) (string, string, error) {
	v, err := p.model.ReviewExtraction(ctx, asRead(s), s.Facts)
	if err != nil {
		return "", "", fmt.Errorf("review extraction: %w", err)
	}
	switch {
	case v.OK && len(s.Facts) == 0:
		s.Outcome, s.Reason, s.Next = memento.RunNothing, "extractor: no fact in the message", NodeStore
		return "nothing", v.Reason, nil
	case v.OK:
		s.Note, s.Next = "", NodeAttribute
		return "accepted", v.Reason, nil
	case s.Rounds <= p.opts.MaxRepairs:
		s.Note, s.Next = v.Reason, NodeExtract
		return "repair", v.Reason, nil
	}
	// A memory the reviewer disputes is worse than none.
	s.Dropped += len(s.Facts)
	s.Outcome, s.Next = memento.RunNothing, NodeStore
	s.Reason = fmt.Sprintf("extraction reviewer still disputed the facts after %d repair rounds: %s", p.opts.MaxRepairs, v.Reason)
	s.Facts = nil
	return "gave up", v.Reason, nil
}

// attribute assigns each fact its attribute and sorts the facts by mode.
func (p *Pipeline) attribute(ctx context.Context, s *State) (string, string, error) {
	assigned, err := p.model.AssignAttributes(ctx, s.Facts, p.schema.Attributes)
	if err != nil {
		return "", "", fmt.Errorf("assign attributes: %w", err)
	}
	overrides, err := p.store.MemoryModes(ctx, s.scope())
	if err != nil {
		return "", "", fmt.Errorf("read memory modes: %w", err)
	}
	s.Modes = map[string]string{}
	s.Episodes, s.Merges = nil, nil
	var parts []string
	dropped := 0
	for _, af := range assigned {
		name := strings.ToUpper(strings.TrimSpace(af.Attribute))
		spec, ok := p.attrs[name]
		if !ok || strings.TrimSpace(af.Fact.Text) == "" {
			dropped++
			parts = append(parts, fmt.Sprintf("%q: no attribute", af.Fact.Text))
			continue
		}
		mode := effectiveMode(spec, overrides)
		s.Modes[name] = mode
		parts = append(parts, fmt.Sprintf("%q: %s (%s)", af.Fact.Text, name, mode))
		if mode == memento.ModeEpisodic {
			s.Episodes = append(s.Episodes, Episode{Attribute: name, Fact: af.Fact})
		} else {
			s.Merges = append(s.Merges, MergeStep{Attribute: name, Fact: af.Fact})
		}
	}
	if len(assigned) < len(s.Facts) {
		dropped += len(s.Facts) - len(assigned)
	}
	s.Dropped += dropped
	detail := strings.Join(parts, "; ")
	if len(s.Episodes) == 0 && len(s.Merges) == 0 {
		s.Outcome, s.Reason, s.Next = memento.RunNothing, "attributor: no fact fits an attribute of the schema", NodeStore
		return "nothing", detail, nil
	}
	// Every kept fact goes through the aggregator, which also finds what
	// it supersedes in the other semantic attributes.
	s.Next = NodeAggregate
	return fmt.Sprintf("%d semantic, %d episodic, %d dropped", len(s.Merges), len(s.Episodes), dropped), detail, nil
}

// effectiveMode is the user's override of an attribute, else their
// override of every attribute, else the schema's mode.
func effectiveMode(spec memento.AttributeSpec, overrides map[string]string) string {
	if m, ok := overrides[spec.Name]; ok && memento.ValidMode(m) {
		return m
	}
	if m, ok := overrides["*"]; ok && memento.ValidMode(m) {
		return m
	}
	if memento.ValidMode(spec.Mode) {
		return spec.Mode
	}
	return memento.ModeSemantic
}

// aggregate merges each semantic fact into its attribute's value, redoing
// the steps the reviewer sent back, and (once per read of the current
// values) finds what the new facts supersede in other attributes.
func (p *Pipeline) aggregate(ctx context.Context, s *State) (string, string, error) {
	if s.Bases == nil {
		current, err := p.store.Memories(ctx, s.scope(), memento.MemoryFilter{Mode: memento.ModeSemantic})
		if err != nil {
			return "", "", fmt.Errorf("read current values: %w", err)
		}
		s.Bases = map[string]Base{}
		for _, m := range current {
			s.Bases[strings.ToUpper(m.Attribute)] = Base{ID: m.ID, Value: m.Value, Sources: m.Sources}
		}
		s.Swept = false
	}
	s.MergeRounds++
	s.Merges = slices.Clone(s.Merges)
	value := map[string]string{}
	for a, b := range s.Bases {
		value[a] = b.Value
	}
	merged := 0
	for i := range s.Merges {
		m := &s.Merges[i]
		if !m.Merged {
			in := memento.MergeInput{Attribute: p.attrs[m.Attribute], Current: value[m.Attribute], Fact: m.Fact, RepairNote: m.Note}
			out, err := p.model.MergeFact(ctx, in)
			if err != nil {
				return "", "", fmt.Errorf("merge into %s: %w", m.Attribute, err)
			}
			m.Before, m.After, m.Merged, m.Accepted = in.Current, strings.TrimSpace(out), true, false
			merged++
		}
		value[m.Attribute] = m.After
	}
	detail := fmt.Sprintf("pass %d: %d merges", s.MergeRounds, merged)
	if !s.Swept {
		if err := p.sweep(ctx, s); err != nil {
			return "", "", err
		}
		s.Swept = true
		if len(s.Sweep) > 0 {
			detail += fmt.Sprintf("; %d values superseded in other attributes", len(s.Sweep))
		}
	}
	s.Next = NodeReviewMerge
	return "ok", detail, nil
}

// sweep finds, for each new fact, the clauses of other current semantic
// values that it supersedes ("has come around on horror" supersedes
// "can't stand horror" under DISLIKES when the fact itself lands in
// GENRE). Only clauses sharing a topic word with the fact are asked
// about: the aggregator merges the fact into the clause and the merge
// reviewer must accept that; a clause the merge drops is superseded. The
// remaining value is the merge without the fact itself.
func (p *Pipeline) sweep(ctx context.Context, s *State) error {
	s.Sweep = nil
	own := map[string]bool{}
	for _, m := range s.Merges {
		own[m.Attribute] = true
	}
	facts := make([]memento.Fact, 0, len(s.Merges)+len(s.Episodes))
	for _, m := range s.Merges {
		facts = append(facts, m.Fact)
	}
	for _, e := range s.Episodes {
		facts = append(facts, e.Fact)
	}
	attrs := make([]string, 0, len(s.Bases))
	for a := range s.Bases {
		if !own[a] {
			attrs = append(attrs, a)
		}
	}
	slices.Sort(attrs)
	for _, a := range attrs {
		spec, ok := p.attrs[a]
		if !ok {
			continue // an attribute of an earlier schema
		}
		value := s.Bases[a].Value
		for _, f := range facts {
			topic := topicWords(f.Text)
			if len(topic) == 0 {
				continue
			}
			var kept, removed []string
			changed := false
			for _, clause := range splitClauses(value) {
				if !sharesWord(topic, topicWords(clause)) {
					kept = append(kept, clause)
					continue
				}
				in := memento.MergeInput{Attribute: spec, Current: clause, Fact: f}
				out, err := p.model.MergeFact(ctx, in)
				if err != nil {
					return fmt.Errorf("check %s against the new fact: %w", a, err)
				}
				rest := withoutFact(out, f.Text)
				if sameText(rest, clause) {
					kept = append(kept, clause)
					continue
				}
				v, err := p.model.ReviewMerge(ctx, in, out)
				if err != nil {
					return fmt.Errorf("review %s against the new fact: %w", a, err)
				}
				if !v.OK {
					kept = append(kept, clause)
					continue
				}
				changed = true
				removed = append(removed, clause)
				if rest != "" {
					kept = append(kept, rest)
				}
			}
			if changed {
				value = strings.Join(kept, clauseSep)
				s.Sweep = append(s.Sweep, Retraction{Attribute: a, Fact: f, Removed: removed, Value: value})
			}
		}
	}
	return nil
}

// reviewMerge reviews every merge not yet accepted, in order per
// attribute; a rejected merge is redone with the note, and so are the
// merges after it in the same attribute (their current value changes).
func (p *Pipeline) reviewMerge(ctx context.Context, s *State) (string, string, error) {
	s.Merges = slices.Clone(s.Merges)
	failed := map[string]bool{}
	var notes []string
	for i := range s.Merges {
		m := &s.Merges[i]
		if failed[m.Attribute] {
			m.Merged, m.Accepted = false, false
			continue
		}
		if m.Accepted || !m.Merged {
			continue
		}
		in := memento.MergeInput{Attribute: p.attrs[m.Attribute], Current: m.Before, Fact: m.Fact, RepairNote: m.Note}
		v, err := p.model.ReviewMerge(ctx, in, m.After)
		if err != nil {
			return "", "", fmt.Errorf("review merge into %s: %w", m.Attribute, err)
		}
		if v.OK {
			m.Accepted, m.Note = true, ""
			continue
		}
		failed[m.Attribute] = true
		m.Merged, m.Note = false, v.Reason
		notes = append(notes, m.Attribute+": "+v.Reason)
	}
	if len(failed) == 0 {
		s.Next = NodeStore
		return "accepted", "", nil
	}
	if s.MergeRounds <= p.opts.MaxRepairs {
		s.Next = NodeAggregate
		return "repair", strings.Join(notes, "; "), nil
	}
	// Out of rounds: each failed attribute keeps the value of its last
	// accepted merge; its later facts are dropped.
	kept := s.Merges[:0]
	for _, m := range s.Merges {
		if m.Accepted {
			kept = append(kept, m)
		} else {
			s.Dropped++
		}
	}
	s.Merges = kept
	s.Next = NodeStore
	return "gave up", strings.Join(notes, "; "), nil
}

// write stores the run: the new and superseded memories, the run record
// and the message's embedding, in one transaction. A conflict with
// another run sends the merges back to the aggregator over fresh values.
func (p *Pipeline) write(ctx context.Context, s *State) (string, string, error) {
	sc := s.scope()
	w := memento.MemoryWrite{Message: s.Message, Base: map[string]memento.MemoryBase{}, Checkpoint: GraphName + "/" + s.Message.ID}
	n := 0
	newID := func() string {
		n++
		return memoryID(sc, s.Message.ID, n)
	}
	// Semantic values: the last accepted merge of each attribute.
	final := map[string]string{}
	var order []string
	for _, m := range s.Merges {
		if !m.Accepted {
			continue
		}
		if _, ok := final[m.Attribute]; !ok {
			order = append(order, m.Attribute)
		}
		final[m.Attribute] = m.After
	}
	for _, r := range s.Sweep {
		if _, ok := final[r.Attribute]; !ok {
			order = append(order, r.Attribute)
		}
		final[r.Attribute] = r.Value
	}
	for _, a := range order {
		base := s.Bases[a]
		v := strings.TrimSpace(final[a])
		if sameText(v, base.Value) {
			continue // nothing new
		}
		w.Base[a] = memento.MemoryBase{ID: base.ID, Value: base.Value}
		if base.ID != "" {
			w.Close = append(w.Close, memento.Supersession{ID: base.ID, Attribute: a})
		}
		if v == "" {
			continue // retracted
		}
		w.Insert = append(w.Insert, memento.Memory{
			ID: newID(), Kind: memento.MemoryAttribute, Attribute: a, Mode: memento.ModeSemantic, Value: v,
			ValidFrom: s.Message.At, Sources: appendSource(base.Sources, s.Message.ID), Thread: s.Message.Thread, RunID: s.Message.ID,
		})
	}
	for _, e := range s.Episodes {
		w.Insert = append(w.Insert, memento.Memory{
			ID: newID(), Kind: memento.MemoryEpisode, Attribute: e.Attribute, Mode: memento.ModeEpisodic, Value: e.Fact.Text,
			ValidFrom: s.Message.At, Sources: []string{s.Message.ID}, Thread: s.Message.Thread, RunID: s.Message.ID,
		})
	}
	outcome, reason := s.Outcome, s.Reason
	if len(w.Insert) > 0 || len(w.Close) > 0 {
		outcome, reason = memento.RunStored, ""
	} else if outcome == "" {
		outcome, reason = memento.RunNothing, "every fact was known already"
	}
	detail := fmt.Sprintf("%d new, %d superseded", len(w.Insert), len(w.Close))
	if p.opts.Embedder != nil {
		texts := make([]string, 0, 1+len(w.Insert))
		texts = append(texts, s.Message.Text)
		for _, m := range w.Insert {
			texts = append(texts, m.Value)
		}
		vecs, err := p.opts.Embedder.Embed(ctx, texts)
		if err != nil || len(vecs) != len(texts) {
			// Recall still finds them by keyword; a backfill embeds them.
			detail += fmt.Sprintf("; not embedded: %v", err)
		} else {
			w.Vector, w.Embedder = vecs[0], p.opts.Embedder.ID()
			for i := range w.Insert {
				w.Insert[i].Vector, w.Insert[i].Embedder = vecs[i+1], p.opts.Embedder.ID()
			}
		}
	}
	run := memento.MemoryRun{
		Message: s.Message.ID, Thread: s.Message.Thread, Outcome: outcome, Reason: reason,
		Rejected: nonNil(s.Rejected), Facts: s.Facts, Dropped: s.Dropped, ExtractRounds: s.Rounds, MergeRounds: s.MergeRounds,
		Conflicts: s.Conflicts, Memories: []string{}, Superseded: []string{}, StartedAt: s.Started, FinishedAt: p.clock.Now(),
	}
	if run.Facts == nil {
		run.Facts = []memento.Fact{}
	}
	for _, m := range w.Insert {
		run.Memories = append(run.Memories, m.ID)
	}
	for _, c := range w.Close {
		run.Superseded = append(run.Superseded, c.ID)
	}
	run.Steps = append(slices.Clone(s.Steps), memento.RunStep{Node: NodeStore, Started: run.FinishedAt, Outcome: outcome, Detail: detail})
	w.Run = run
	written, err := p.store.WriteMemories(ctx, sc, w)
	switch {
	case memento.ErrorCode(err) == memento.ECONFLICT && s.Conflicts < p.opts.MaxConflicts && len(s.Merges)+len(s.Sweep) > 0:
		s.Conflicts++
		// The merges start over against fresh values, with a fresh
		// repair budget.
		s.Bases, s.Swept, s.Sweep, s.MergeRounds = nil, false, nil, 0
		s.Merges = slices.Clone(s.Merges)
		for i := range s.Merges {
			s.Merges[i].Merged, s.Merges[i].Accepted, s.Merges[i].Note = false, false, ""
		}
		s.Next = NodeAggregate
		return "conflict", memento.ErrorMessage(err), nil
	case err != nil:
		return "", "", fmt.Errorf("store: %w", err)
	}
	if !written {
		// Another run of the same message stored first; report that one.
		stored, err := p.store.MemoryRun(ctx, sc, s.Message.ID)
		if err != nil {
			return "", "", fmt.Errorf("store: read the run stored before: %w", err)
		}
		run = *stored
		detail = "stored before by another run"
	}
	s.Run, s.Next = &run, graph.End
	return outcome, detail, nil
}

// memoryID derives a memory's id from the message and its position in the
// run's write, so a repeated write of the same run cannot add a copy.
func memoryID(s memento.Scope, message string, n int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%d", s.Tenant, s.User, message, n)))
	return "mem_" + hex.EncodeToString(h[:12])
}

func appendSource(sources []string, id string) []string {
	out := slices.Clone(sources)
	if !slices.Contains(out, id) {
		out = append(out, id)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func factList(facts []memento.Fact) string {
	if len(facts) == 0 {
		return "no facts"
	}
	parts := make([]string, len(facts))
	for i, f := range facts {
		parts[i] = fmt.Sprintf("%q", f.Text)
	}
	return strings.Join(parts, ", ")
}

// throttled saves a run's checkpoint only when enough time passed since
// the run started or was last saved (see Options.CheckpointAfter), and
// never saves a finished run: the store node's write, which deletes the
// checkpoint in its transaction, marks the message as processed.
type throttled struct {
	inner graph.Checkpointer
	after time.Duration
	clock memento.Clock
	last  time.Time
}

func (t *throttled) Load(ctx context.Context, key string) (*graph.Checkpoint, bool, error) {
	return t.inner.Load(ctx, key)
}

// Due tells the graph whether a save now would be kept, so that it does
// not encode the state of the saves Save would drop (the most of a run's).
func (t *throttled) Due(done bool) bool {
	return !done && (t.after <= 0 || t.clock.Now().Sub(t.last) >= t.after)
}

func (t *throttled) Save(ctx context.Context, key string, cp graph.Checkpoint) error {
	if !t.Due(cp.Done) {
		return nil
	}
	if err := t.inner.Save(ctx, key, cp); err != nil {
		return err
	}
	t.last = t.clock.Now()
	return nil
}

func (t *throttled) Delete(ctx context.Context, key string) error { return t.inner.Delete(ctx, key) }

// errGone reports whether err says the message or its user is gone.
func errGone(err error) bool {
	return err != nil && memento.ErrorCode(err) == memento.ENOTFOUND && !errors.Is(err, context.Canceled)
}
