package memento

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JobRemember is the job kind of the attribute-memory pipeline: one job per
// stored message, whose payload is a MessageJob. The pipeline decides what
// of the message to remember and indexes it for recall.
const JobRemember = "remember"

// Memory modes. The mode of an attribute is set in its schema and can be
// overridden per user.
const (
	// ModeSemantic keeps one consolidated current value per (user,
	// attribute). A new fact is merged into it; the value it replaces is
	// kept with ValidTo set, so history stays answerable.
	ModeSemantic = "semantic"
	// ModeEpisodic keeps every statement as its own memory, stamped with
	// the time of the message that made it.
	ModeEpisodic = "episodic"
)

// Memory kinds. A memory's kind follows from its mode and names the recall
// kind it is brought back as (RecallAttribute, RecallEpisode).
const (
	MemoryAttribute = RecallAttribute // a semantic attribute value
	MemoryEpisode   = RecallEpisode   // an episodic statement
)

// KindOf returns the memory kind of a mode.
func KindOf(mode string) string {
	if mode == ModeEpisodic {
		return MemoryEpisode
	}
	return MemoryAttribute
}

// ValidMode reports whether mode is ModeSemantic or ModeEpisodic.
func ValidMode(mode string) bool { return mode == ModeSemantic || mode == ModeEpisodic }

// Memory is one thing the attribute pipeline learned about a user. Its JSON
// shape (id, kind, attribute, mode, value, validFrom, validTo, sources) is a
// contract; later fields are additions.
type Memory struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Attribute string `json:"attribute"`
	Mode      string `json:"mode"`
	Value     string `json:"value"`
	// ValidFrom is when the memory became true: the time of the message
	// that stated it (for a semantic value, of the newest fact merged in).
	ValidFrom time.Time `json:"validFrom"`
	// ValidTo is nil while the memory is current; a superseded semantic
	// value gets the time the value replacing it became valid.
	ValidTo *time.Time `json:"validTo"`
	// Sources are the ids of the messages the memory came from, oldest
	// first. A semantic value keeps the sources of every fact merged in.
	Sources []string `json:"sources"`
	// Thread is the thread of the newest source message.
	Thread string `json:"thread,omitempty"`
	// RunID names the pipeline run that wrote the memory: the id of the
	// message it processed. GET .../runs/{runId} shows its trace.
	RunID     string    `json:"runId,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
	// Vector and Embedder are the memory's embedding, kept for recall and
	// never rendered to JSON (an export is re-embedded on import).
	Vector   []float32 `json:"-"`
	Embedder string    `json:"-"`
}

// Current reports whether the memory has not been superseded.
func (m Memory) Current() bool { return m.ValidTo == nil }

// MemoryFilter selects memories to list. Zero values select every current
// memory of the user.
type MemoryFilter struct {
	Kind      string // MemoryAttribute or MemoryEpisode
	Attribute string // exact attribute name, case-insensitive
	Mode      string // ModeSemantic or ModeEpisodic
	Thread    string
	// All includes superseded memories.
	All bool
	// Limit bounds the list; 0 means no limit.
	Limit int
}

// Validate checks the filter's values.
func (f MemoryFilter) Validate() error {
	switch f.Kind {
	case "", MemoryAttribute, MemoryEpisode:
	default:
		return Errorf(EINVALID, "kind must be %q or %q, got %q", MemoryAttribute, MemoryEpisode, f.Kind)
	}
	if f.Mode != "" && !ValidMode(f.Mode) {
		return Errorf(EINVALID, "mode must be %q or %q, got %q", ModeSemantic, ModeEpisodic, f.Mode)
	}
	if f.Limit < 0 {
		return Errorf(EINVALID, "limit must not be negative, got %d", f.Limit)
	}
	return nil
}

// MemoryUpdate is a user's edit of a memory.
type MemoryUpdate struct {
	// Value replaces the memory's value; it must not be empty.
	Value string `json:"value"`
}

// MemoryService is the read and edit side of attribute memory, as the API
// and the CLI use it.
type MemoryService interface {
	// Memories lists a user's memories matching f: semantic values by
	// attribute, then episodes, each oldest first. Errors: EINVALID.
	Memories(ctx context.Context, s Scope, f MemoryFilter) ([]Memory, error)
	// Memory returns one memory. Errors: ENOTFOUND.
	Memory(ctx context.Context, s Scope, id string) (*Memory, error)
	// MemoryHistory returns every version of the memory's attribute value,
	// newest first, the memory itself included: for a semantic memory the
	// values that superseded each other, for an episode the episode alone.
	// Errors: ENOTFOUND.
	MemoryHistory(ctx context.Context, s Scope, id string) ([]Memory, error)
	// UpdateMemory changes a memory's value. A current semantic value keeps
	// its id and the old value joins its history, closed at the time of
	// the edit. Errors: ENOTFOUND, EINVALID (empty value), ECONFLICT (the
	// memory was superseded; edit the current one).
	UpdateMemory(ctx context.Context, s Scope, id string, u MemoryUpdate) (*Memory, error)
	// DeleteMemory forgets a memory and, for a semantic value, the versions
	// it superseded. Errors: ENOTFOUND.
	DeleteMemory(ctx context.Context, s Scope, id string) error
	// SetMemoryMode overrides the mode of an attribute for one user ("*"
	// for every attribute); an empty mode removes the override. Errors:
	// EINVALID.
	SetMemoryMode(ctx context.Context, s Scope, attribute, mode string) error
	// MemoryModes returns the user's overrides by attribute.
	MemoryModes(ctx context.Context, s Scope) (map[string]string, error)
	// MemoryRun returns the trace of the pipeline run over a message.
	// Errors: ENOTFOUND.
	MemoryRun(ctx context.Context, s Scope, message string) (*MemoryRun, error)
	// MemoryRuns lists the user's runs, newest first, at most limit (0: all).
	MemoryRuns(ctx context.Context, s Scope, limit int) ([]MemoryRun, error)
}

// Outcomes of a pipeline run.
const (
	RunStored   = "stored"   // at least one memory was written, superseded or retracted
	RunNothing  = "nothing"  // the sentinel found nothing worth remembering, or no fact survived
	RunRejected = "rejected" // hygiene refused the message as an instruction to the system
	RunSkipped  = "skipped"  // not a user message: indexed for recall, nothing extracted
)

// MemoryRun is the record of one pipeline run over one message: what each
// step did and what was written. It is stored with the memories it wrote,
// in the same transaction.
type MemoryRun struct {
	Message string `json:"message"`
	Thread  string `json:"thread"`
	Outcome string `json:"outcome"`
	// Reason says why the run ended as it did ("sentinel: no durable
	// personal statement", ...).
	Reason string `json:"reason,omitempty"`
	// Rejected lists why hygiene refused the message or facts, one
	// reason per match.
	Rejected []string `json:"rejected"`
	// Facts are the facts the reviewed extraction kept.
	Facts []Fact `json:"facts"`
	// Dropped counts facts that were not stored: no attribute fitted,
	// the reviewer still disputed them after the last repair round, or a
	// merge could not be made to pass review.
	Dropped       int `json:"dropped"`
	ExtractRounds int `json:"extractRounds"`
	MergeRounds   int `json:"mergeRounds"`
	// Conflicts counts writes retried because another run changed an
	// attribute at the same time.
	Conflicts int `json:"conflicts"`
	// Memories are the ids written; Superseded the ids closed by them.
	Memories   []string  `json:"memories"`
	Superseded []string  `json:"superseded"`
	Steps      []RunStep `json:"steps"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
}

// RunStep is one step of a pipeline run, as its trace shows it.
type RunStep struct {
	Node     string        `json:"node"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	// Outcome is "ok", "error" or what the step decided ("rejected",
	// "repair", "nothing", ...).
	Outcome string `json:"outcome"`
	// Detail says what the step saw, for a person reading the trace.
	Detail string `json:"detail,omitempty"`
	// Notes are what the step's components noted (memento.AddNote), such
	// as the offline model standing in for an unusable model answer.
	Notes []string `json:"notes,omitempty"`
}

// MemoryBase is the current value of an attribute that a write was
// computed from.
type MemoryBase struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// Supersession closes a current semantic value, the one with ID, at a time.
type Supersession struct {
	ID        string `json:"id"`
	Attribute string `json:"attribute"`
}

// MemoryWrite is everything one pipeline run writes, in one transaction:
// the current semantic values it closes, the memories it adds, the run
// record and the message's embedding for recall.
type MemoryWrite struct {
	Message Message
	// Base maps each semantic attribute the run changes to the current
	// value it merged into (zero when there was none). The write fails
	// with ECONFLICT when the current value is another one by then, or
	// was edited.
	Base map[string]MemoryBase
	// Close are the current values superseded (or retracted) at
	// Message.At.
	Close []Supersession
	// Insert are the new memories.
	Insert []Memory
	Run    MemoryRun
	// Vector is the message's embedding, by the embedder named Embedder;
	// nil stores none.
	Vector   []float32
	Embedder string
	// Checkpoint is the key of the run's graph checkpoint, deleted with
	// the write since the stored run now marks the message as processed.
	Checkpoint string
}

// MemoryWriter stores the results of pipeline runs.
type MemoryWriter interface {
	// WriteMemories stores w atomically. A message whose run is already
	// stored is left as it is (a repeat writes nothing and returns
	// false). Errors: ECONFLICT when a base value changed, EINVALID.
	WriteMemories(ctx context.Context, s Scope, w MemoryWrite) (written bool, err error)
}

// MemoryBatchWriter stores the results of several pipeline runs of one
// user in one transaction: a batch of the user's messages runs them one
// after the other, each over the values the ones before it left, and
// writes them together, so that the batch waits for one commit rather
// than one per message.
type MemoryBatchWriter interface {
	// WriteMemoryBatch applies ws in order in one transaction, each as
	// WriteMemories applies one (a write's base values are checked
	// against what the writes before it left), and reports for each
	// whether it was written. It writes all or nothing: an error of any
	// write leaves every one unwritten. Errors: ECONFLICT, EINVALID,
	// ENOTFOUND (a message is gone).
	WriteMemoryBatch(ctx context.Context, s Scope, ws []MemoryWrite) ([]bool, error)
}

// Schema is a set of attributes the pipeline sorts facts into. Schemas are
// data: JSON files with the same shape.
type Schema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Attributes  []AttributeSpec `json:"attributes"`
}

// Attribute returns the attribute with the given name, case-insensitively.
func (s Schema) Attribute(name string) (AttributeSpec, bool) {
	for _, a := range s.Attributes {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return AttributeSpec{}, false
}

// Validate checks that the schema has attributes with unique, non-empty
// names, descriptions and known modes.
func (s Schema) Validate() error {
	if len(s.Attributes) == 0 {
		return Errorf(EINVALID, "schema %q has no attributes", s.Name)
	}
	seen := map[string]bool{}
	for i, a := range s.Attributes {
		name := strings.TrimSpace(a.Name)
		switch {
		case name == "":
			return Errorf(EINVALID, "schema %q: attributes[%d] has no name", s.Name, i)
		case name == "*" || strings.ContainsAny(name, " \t\n"):
			return Errorf(EINVALID, "schema %q: attribute name %q must be one word", s.Name, a.Name)
		case seen[strings.ToUpper(name)]:
			return Errorf(EINVALID, "schema %q: attribute %q is listed twice", s.Name, a.Name)
		case strings.TrimSpace(a.Description) == "":
			return Errorf(EINVALID, "schema %q: attribute %q has no description; the model needs one", s.Name, a.Name)
		case !ValidMode(a.Mode):
			return Errorf(EINVALID, "schema %q: attribute %q has mode %q; want %q or %q", s.Name, a.Name, a.Mode, ModeSemantic, ModeEpisodic)
		}
		seen[strings.ToUpper(name)] = true
	}
	return nil
}

// Merge returns a schema holding the attributes of s followed by those of
// other that s does not name.
func (s Schema) Merge(name string, other Schema) Schema {
	out := Schema{Name: name, Attributes: append([]AttributeSpec(nil), s.Attributes...)}
	for _, a := range other.Attributes {
		if _, ok := s.Attribute(a.Name); !ok {
			out.Attributes = append(out.Attributes, a)
		}
	}
	return out
}

// ThreadExport is one thread of a user export: its state, messages and
// summaries.
type ThreadExport struct {
	Thread        Thread        `json:"thread"`
	ActiveContext ActiveContext `json:"activeContext"`
	LastShown     []string      `json:"lastShown"`
	// Shown is every title the thread has shown, newest first
	// (ThreadState.Shown); a document without it restores LastShown.
	Shown     []string  `json:"shown,omitempty"`
	Messages  []Message `json:"messages"`
	Summaries []Summary `json:"summaries"`
	// Answers are the agent's stored answers, by the assistant message
	// each came with (GET .../threads/{thread}/answers).
	Answers []TurnAnswer `json:"answers,omitempty"`
}

// UserExportFormat names the version of the export document.
const UserExportFormat = "memento.user/v1"

// UserExport is everything Memento keeps about one user, as one JSON
// document (GET /v1/users/{user}/export). Each top-level key is a section;
// components that keep more per-user data (profiles, preferences) add a
// typed field here or put their section in Sections under their name.
type UserExport struct {
	Format     string            `json:"format"`
	Tenant     string            `json:"tenant"`
	User       string            `json:"user"`
	ExportedAt time.Time         `json:"exportedAt"`
	Threads    []ThreadExport    `json:"threads"`
	Events     []Event           `json:"events"`
	Memories   []Memory          `json:"memories"`
	Runs       []MemoryRun       `json:"runs"`
	Modes      map[string]string `json:"modes"`
	// Sections holds the sections of other components by name.
	Sections map[string]json.RawMessage `json:"sections,omitempty"`
}

// CheckFormat reports whether the document is an export this version can
// import: its format, and every time in it within the range a store can
// hold (CheckTime), so none is stored wrapped around.
func (e *UserExport) CheckFormat() error {
	if e.Format != UserExportFormat {
		return Errorf(EINVALID, "export format must be %q, got %q", UserExportFormat, e.Format)
	}
	return e.checkTimes()
}

// ImportResult counts what an import stored; rows already present (by id)
// are skipped.
type ImportResult struct {
	Threads   int `json:"threads"`
	Messages  int `json:"messages"`
	Summaries int `json:"summaries"`
	Events    int `json:"events"`
	Memories  int `json:"memories"`
	Runs      int `json:"runs"`
	Answers   int `json:"answers"`
	Skipped   int `json:"skipped"`
}

// UserSection is implemented by a component that keeps per-user data of
// its own, so that export, import and forgetting a user cover it.
type UserSection interface {
	// SectionName is the key of the section in UserExport.Sections.
	SectionName() string
	// ExportSection returns the user's data as JSON.
	ExportSection(ctx context.Context, s Scope) (json.RawMessage, error)
	// ImportSection stores a section ExportSection produced. Errors:
	// EINVALID.
	ImportSection(ctx context.Context, s Scope, data json.RawMessage) error
}

// RecallCandidate is a stored text the recall path may bring back, as a
// store hands it over for scoring: a memory or a message, with its keyword
// relevance and its stored embedding.
type RecallCandidate struct {
	Kind      string // RecallAttribute, RecallEpisode or RecallMessage
	ID        string
	Text      string
	Attribute string // memories only
	Thread    string
	Seq       int64 // messages only: the position in the thread
	Role      Role  // messages only
	At        time.Time
	Sources   []string
	// BM25 is the keyword relevance to the query (higher is better); 0
	// for candidates taken for recency or as neighbours.
	BM25 float64
	// Neighbor marks a message taken because it is next to a keyword
	// match in its thread.
	Neighbor bool
	Vector   []float32
	Embedder string
	// Cosine is the cosine similarity of the stored embedding to the
	// query's (CandidateQuery.Vector), when HasCosine: a store that holds
	// the embeddings in another form answers it rather than the Vector.
	Cosine    float64
	HasCosine bool
	// Periods are the times the text tells of ("yesterday", "last week",
	// "in May", "two years ago"), resolved against At, the time it was
	// said, and TellsTime reports whether it says when something happened
	// at all (also for "recently" or "for four years", which name no
	// period). Stores resolve them once, when they write the row, and
	// keep them with it, so recall matches a question's times against
	// them without reading every candidate's text again.
	Periods   []Period
	TellsTime bool
}

// Period is a half-open span of time, [From, To).
type Period struct{ From, To time.Time }

// FormatPeriods writes what a text tells of time (RecallCandidate's
// Periods and TellsTime) as the stores keep it in a column: "" for a text
// that tells no time, else a JSON array of [from, to] pairs in Unix
// seconds, "[]" for one that tells a time it names no period of. Most
// texts tell none, so most rows hold the empty string.
func FormatPeriods(periods []Period, tells bool) string {
	if !tells && len(periods) == 0 {
		return ""
	}
	b := make([]byte, 0, 2+24*len(periods))
	b = append(b, '[')
	for i, p := range periods {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, p.From.Unix(), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, p.To.Unix(), 10)
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// ParsePeriods reads a column FormatPeriods wrote; times are in UTC.
// Errors: EINVALID.
func ParsePeriods(s string) (periods []Period, tells bool, err error) {
	if s == "" {
		return nil, false, nil
	}
	var pairs [][2]int64
	if err := json.Unmarshal([]byte(s), &pairs); err != nil {
		return nil, false, WrapError(EINVALID, err, "stored periods %q: %v", s, err)
	}
	if len(pairs) > 0 {
		periods = make([]Period, len(pairs))
		for i, p := range pairs {
			periods[i] = Period{From: time.Unix(p[0], 0).UTC(), To: time.Unix(p[1], 0).UTC()}
		}
	}
	return periods, true, nil
}

// CandidateQuery bounds the candidate set a store returns for recall.
type CandidateQuery struct {
	Query string
	// Keyword is how many best BM25 matches to take.
	Keyword int
	// Recent is how many most recent items to take as well.
	Recent int
	// Neighbors, for messages, also takes the messages up to this many
	// positions before and after each keyword match in its thread: of the
	// NeighborHits best matches (0: of every match).
	Neighbors    int
	NeighborHits int
	// ExcludeThread leaves out the messages of a thread (the one a prompt
	// already holds).
	ExcludeThread string
	// From and To, when set, also take the Keyword best matches among the
	// items of that period (a message's time, a memory's validFrom), for
	// a query that names a date.
	From, To time.Time
	// Vector, when set, is the query's embedding by the embedder named
	// Embedder: a store may then answer, for each candidate of that
	// embedder, its Cosine to it and leave out the candidates' Vectors
	// (the warm recall index does, and so decodes no embedding). Stores
	// that ignore it answer the Vectors as before.
	Vector   []float32
	Embedder string
}

// Bounds of a candidate query, so the read path never scans without limit.
const (
	MaxCandidateKeyword   = 500
	MaxCandidateRecent    = 2000
	MaxCandidateNeighbors = 5
)

// MaxTermMatches is how many of a user's documents a query word may match
// and still take part in keyword ranking, in the store's queries and in
// recall's warm index alike. A word found in a large share of a long
// history ("went") says little about which documents are relevant (its
// inverse document frequency, and so its weight in BM25, is close to
// nothing), and in FTS5 it would cost milliseconds, since bm25() is
// computed for every match before the best are kept.
const MaxTermMatches = 400

// Check validates the bounds of q. Errors: EINVALID.
func (q CandidateQuery) Check() error {
	switch {
	case q.Keyword < 0 || q.Keyword > MaxCandidateKeyword:
		return Errorf(EINVALID, "keyword candidates must be 0 to %d, got %d", MaxCandidateKeyword, q.Keyword)
	case q.Recent < 0 || q.Recent > MaxCandidateRecent:
		return Errorf(EINVALID, "recent candidates must be 0 to %d, got %d", MaxCandidateRecent, q.Recent)
	case q.Neighbors < 0 || q.Neighbors > MaxCandidateNeighbors:
		return Errorf(EINVALID, "neighbors must be 0 to %d, got %d", MaxCandidateNeighbors, q.Neighbors)
	case q.NeighborHits < 0:
		return Errorf(EINVALID, "neighbor hits must not be negative, got %d", q.NeighborHits)
	case len(q.Vector) > 0 && q.Embedder == "":
		return Errorf(EINVALID, "a query vector needs the id of the embedder that made it")
	}
	if err := CheckTime("from", q.From); err != nil {
		return err
	}
	return CheckTime("to", q.To)
}

// RecallStore hands recall its candidates, each set read in one snapshot.
type RecallStore interface {
	// MemoryCandidates returns current memories matching q. Errors: EINVALID.
	MemoryCandidates(ctx context.Context, s Scope, q CandidateQuery) ([]RecallCandidate, error)
	// MessageCandidates returns messages matching q. Errors: EINVALID.
	MessageCandidates(ctx context.Context, s Scope, q CandidateQuery) ([]RecallCandidate, error)
}

// RecallDoc is one of a user's recall documents as the store holds it now:
// a memory or a message with everything a candidate carries, keyed by the
// store's row key within its kind.
type RecallDoc struct {
	Key       int64
	Candidate RecallCandidate
	// Current is false for a memory superseded (validTo set) and Rejected
	// true for a message the pipeline refused as an instruction to the
	// system: neither is ever a recall candidate.
	Current  bool
	Rejected bool
}

// RecallKey names a recall document: its kind (RecallMessage, or
// RecallAttribute / RecallEpisode for memories, which share one key space
// under the kind "memory") and its row key.
type RecallKey struct {
	Memory bool
	Key    int64
}

// RecallDocs is what changed in a user's recall documents, read in one
// snapshot of the store.
type RecallDocs struct {
	// Through is the position in the store's change log the snapshot
	// reflects; the next read asks for changes after it.
	Through int64
	// Full means Docs are all of the user's documents, replacing whatever
	// the reader held: the first read, or one the change log can no longer
	// answer (its rows were pruned).
	Full bool
	// Docs are the documents that exist now (all of them when Full, else
	// those changed), and Removed the keys of changed documents that no
	// longer exist.
	Docs    []RecallDoc
	Removed []RecallKey
}

// RecallCorpus lets an in-process index keep a user's recall documents
// warm: it returns what changed since a position of the store's change
// log, whoever changed it.
type RecallCorpus interface {
	// RecallDocs returns the user's documents changed after position after
	// (all of them, Full, when after < 0 or the log no longer reaches back
	// to it). Errors: EINVALID.
	RecallDocs(ctx context.Context, s Scope, after int64) (*RecallDocs, error)
}

// EstimateTokens estimates how many tokens a language model's tokenizer
// makes of text, without a tokenizer: words are split at white space,
// each counts 1.3 tokens per started six bytes (so "the" is 1.3 and
// "recommendation" 3.9), and the sum is rounded up. The rule of thumb of
// 1.3 tokens per English word is what prompt budgets are usually planned
// with; chunking long words keeps ids and URLs from being undercounted.
func EstimateTokens(text string) int {
	n := 0.0
	for _, w := range strings.Fields(text) {
		n += 1.3 * float64((len(w)+5)/6)
	}
	return int(n + 0.999)
}

// String renders a run briefly, for logs.
func (r MemoryRun) String() string {
	return fmt.Sprintf("run %s: %s (%d memories, %d dropped, %d rejected)", r.Message, r.Outcome, len(r.Memories), r.Dropped, len(r.Rejected))
}
