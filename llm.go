package memento

import "context"

// The language-model tasks. Each is one small interface with typed input
// and output, so a caller depends on exactly the tasks it uses and a provider
// (llm/offline, llm/openai) implements them all. Adding a task means adding
// an interface here and a method to each provider.

// Understanding is what a user's turn asks of the recommendation agent, as
// a change to the thread's active context. The agent applies it in code.
type Understanding struct {
	// Search is true when the turn needs a catalog search; false for
	// questions, thanks and small talk.
	Search bool `json:"search"`
	// Replace is true for a new, unrelated request: the old constraints and
	// exclusions are dropped before the ones below are applied.
	Replace bool `json:"replace"`
	// Reject is true when the user turns down (or has already seen) the
	// titles just shown: they join the exclusions and every constraint
	// carries forward.
	Reject bool `json:"reject"`
	// Genres, when not nil, replace the context's genres (catalog
	// vocabulary, such as "Science Fiction").
	Genres []string `json:"genres,omitempty"`
	// ExcludeGenres, when not nil, are genres the user turned down ("not
	// animated", "no horror"): they join the context's excluded genres and
	// leave its genres.
	ExcludeGenres []string `json:"excludeGenres,omitempty"`
	// TitleType, when set, replaces the type ("movie" or "tvSeries").
	TitleType string `json:"titleType,omitempty"`
	// MinYear and MaxYear, when set, replace the year bounds.
	MinYear *int `json:"minYear,omitempty"`
	MaxYear *int `json:"maxYear,omitempty"`
	// YearShift moves the year window relative to the titles just shown:
	// "older" or "newer".
	YearShift string `json:"yearShift,omitempty"`
	// People, when not nil, replace the people (names as in the catalog).
	People []string `json:"people,omitempty"`
	// FreeText, when set, replaces the free-text topic.
	FreeText string `json:"freeText,omitempty"`
	// IsAdult, when set, replaces the adult flag.
	IsAdult *bool `json:"isAdult,omitempty"`
	// Count, when positive, is how many titles the user asked for.
	Count int `json:"count,omitempty"`
	// Recognised is false when nothing in the message was understood; the
	// agent then asks rather than guessing.
	Recognised bool `json:"recognised"`
	// Question holds the user's question when the turn asks about the
	// agent itself ("how does this work?"), for the reply writer.
	Question string `json:"question,omitempty"`

	// Like names titles the user wants more of ("more like the second
	// one", "something like Inception"); they replace the context's Like.
	// With Like set, the other fields say what to change ("like The
	// Matrix but funnier": Like The Matrix, Genres [Comedy]).
	Like []TitleRef `json:"like,omitempty"`
	// About names a title the user asks about ("tell me more about the
	// first one"): the answer describes it from the catalog, with no
	// search (Search is false).
	About []TitleRef `json:"about,omitempty"`
	// Seen names titles the user has already seen ("I've already seen
	// Heat"): exactly these are excluded, now and in later threads.
	Seen []TitleRef `json:"seen,omitempty"`
	// RejectTitles names titles the user turns down ("not Heat", "not the
	// second one"): exactly these are excluded, now and in later threads.
	// Reject, by contrast, turns down everything just shown.
	RejectTitles []TitleRef `json:"rejectTitles,omitempty"`
	// Corrections are the words read as a known genre or name although
	// misspelt ("horor" as Horror).
	Corrections []Correction `json:"corrections,omitempty"`
	// Soft, when not nil, are wishes the catalog cannot filter on
	// (runtime, platform, mood); they join the context's, replacing one
	// of the same kind.
	Soft []SoftConstraint `json:"soft,omitempty"`
}

// TitleRef is a title as a user refers to it: by its position in the
// previous answer (1 for the first, -1 for the last) or by its name as
// written. The agent resolves it against what it showed, then the catalog.
type TitleRef struct {
	Position int    `json:"position,omitempty"`
	Name     string `json:"name,omitempty"`
}

// UnderstandInput is the turn to understand and what the thread remembers.
type UnderstandInput struct {
	Message   string        `json:"message"`
	Context   ActiveContext `json:"activeContext"`
	Summary   string        `json:"summary,omitempty"`
	LastShown []Title       `json:"lastShown,omitempty"`
}

// RequestUnderstander turns a user's turn into a change of the active context.
type RequestUnderstander interface {
	// UnderstandRequest never guesses: what it cannot read is left unset.
	// Errors: EUNAVAILABLE when a model server fails.
	UnderstandRequest(ctx context.Context, in UnderstandInput) (*Understanding, error)
}

// Verdict is a yes or no with the reason, used by the sentinel and the
// reviewers.
type Verdict struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// Fact is one distinct statement extracted from a message, in the third
// person or as a short phrase ("likes science fiction").
type Fact struct {
	Text string `json:"text"`
	// Negated is true for facts that deny ("does not like horror").
	Negated bool `json:"negated,omitempty"`
}

// AttributeSpec is one attribute of a memory schema, as the model sees it.
type AttributeSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Mode        string `json:"mode"` // "semantic" or "episodic"
}

// Sentinel decides whether a message holds anything worth remembering.
type Sentinel interface {
	// WorthRemembering is the first, cheap step of the attribute pipeline.
	WorthRemembering(ctx context.Context, message string, schema []AttributeSpec) (*Verdict, error)
}

// ExtractInput is a message to extract facts from. RepairNote, when set, is
// the reviewer's note on the previous attempt.
type ExtractInput struct {
	Message    string `json:"message"`
	Previous   []Fact `json:"previous,omitempty"`
	RepairNote string `json:"repairNote,omitempty"`
	// Asked is the agent's turn just before the message, when there is
	// one: a short answer ("Mostly Netflix, sometimes Hulu.") states a
	// fact only together with the question it answers ("Which service do
	// you watch on?"). Facts are still only what the user says.
	Asked string `json:"asked,omitempty"`
	// Summary is the thread's latest summary, for what the message refers
	// to; nothing in it is a fact of this message.
	Summary string `json:"summary,omitempty"`
}

// FactExtractor lists every distinct fact in a message.
type FactExtractor interface {
	ExtractFacts(ctx context.Context, in ExtractInput) ([]Fact, error)
}

// ExtractionReviewer compares extracted facts with their message.
type ExtractionReviewer interface {
	// ReviewExtraction returns OK=false with a repair note in Reason when a
	// fact is invented, garbled or missing. A message that answers the
	// agent's question comes with it, as "Agent: <question>\nUser:
	// <message>", so facts may take their words from the question.
	ReviewExtraction(ctx context.Context, message string, facts []Fact) (*Verdict, error)
}

// AttributedFact is a fact with the schema attribute it belongs to; an
// empty Attribute means none fits and the fact is dropped.
type AttributedFact struct {
	Fact      Fact   `json:"fact"`
	Attribute string `json:"attribute"`
}

// Attributor assigns each fact one attribute of the schema.
type Attributor interface {
	AssignAttributes(ctx context.Context, facts []Fact, schema []AttributeSpec) ([]AttributedFact, error)
}

// MergeInput is a new fact to merge into the stored value of an attribute.
type MergeInput struct {
	Attribute  AttributeSpec `json:"attribute"`
	Current    string        `json:"current"`
	Fact       Fact          `json:"fact"`
	RepairNote string        `json:"repairNote,omitempty"`
}

// Aggregator merges a fact into an attribute's one consolidated value.
type Aggregator interface {
	MergeFact(ctx context.Context, in MergeInput) (string, error)
}

// MergeReviewer catches a merge that dropped information.
type MergeReviewer interface {
	// ReviewMerge returns OK=false with a repair note in Reason when merged
	// lost something of current or of the fact that was not superseded.
	ReviewMerge(ctx context.Context, in MergeInput, merged string) (*Verdict, error)
}

// SummariseInput is the running summary of a thread and the exchange to
// fold into it.
type SummariseInput struct {
	Previous string    `json:"previous"`
	Messages []Message `json:"messages"`
	MaxChars int       `json:"maxChars"`
}

// Summariser rolls an exchange into a thread's running summary.
type Summariser interface {
	// Summarise returns the new summary, at most MaxChars long.
	Summarise(ctx context.Context, in SummariseInput) (string, error)
}

// PreferenceKinds say how fast a preference fades.
const (
	KindTaste = "taste" // likes and dislikes; fade quickly
	KindFact  = "fact"  // facts about the user, such as where they live; fade slowly
)

// Concept is a like or dislike normalised to the thing itself:
// "I don't like very sweet desserts" gives {Concept: "very sweet desserts",
// Sign: -1}.
type Concept struct {
	Concept string `json:"concept"`
	// Sign is +1 for a like and -1 for a dislike.
	Sign int `json:"sign"`
	// Strength in (0, 1]: "love" is stronger than "quite like".
	Strength float64 `json:"strength"`
	Kind     string  `json:"kind"`
}

// PreferenceExtractor finds the likes and dislikes in a message.
type PreferenceExtractor interface {
	ExtractPreferences(ctx context.Context, message string) ([]Concept, error)
}

// ClusterMember is one preference of a cluster to describe.
type ClusterMember struct {
	Concept string  `json:"concept"`
	Weight  float64 `json:"weight"` // signed, effective
}

// ClusterDescription is a cluster's direction in words and each member's
// stance ("support" or "oppose"), in the order of the members.
type ClusterDescription struct {
	Description string   `json:"description"`
	Stances     []string `json:"stances"`
}

// ClusterDescriber names the direction of a cluster of preferences.
type ClusterDescriber interface {
	DescribeCluster(ctx context.Context, members []ClusterMember) (*ClusterDescription, error)
}

// ReplyInput is everything the agent's reply may draw on. Titles are the
// only titles the reply may name.
type ReplyInput struct {
	Message  string        `json:"message"`
	Context  ActiveContext `json:"activeContext"`
	Searched bool          `json:"searched"`
	Titles   []Title       `json:"titles"`
	Notes    []string      `json:"notes"`
	Summary  string        `json:"summary,omitempty"`
	Memories []string      `json:"memories,omitempty"`
	Question string        `json:"question,omitempty"`
	// About is the title the user asked about, when the turn is such a
	// question: the reply describes it from these catalog fields.
	About *Title `json:"about,omitempty"`
	// MemoryEffect is what long-term memory changed in this answer, as
	// one short clause ("leaving out Heat, which you have seen"), or
	// empty when it changed nothing. The reply mentions memory only
	// through it, so it never claims to have used memory it did not.
	MemoryEffect string `json:"memoryEffect,omitempty"`
	// Frustrated is set when the user turns the titles down again and
	// the message expresses frustration (its Emotion is anger, disgust
	// or sadness): the reply says so briefly and offers to widen the
	// search, by loosening one of Widen (the constraints in force, in
	// words, such as "the comedy genre"; empty when there are none).
	Frustrated bool     `json:"frustrated,omitempty"`
	Widen      []string `json:"widen,omitempty"`
}

// ReplyWriter writes the agent's answer.
type ReplyWriter interface {
	WriteReply(ctx context.Context, in ReplyInput) (string, error)
}

// EmotionClassifier tags a user's message with the emotion it expresses.
// It is not part of LanguageModel: the offline rules tag every message as
// it is written, and a model server is asked only when configured to.
type EmotionClassifier interface {
	// ClassifyEmotion returns one of EmotionLabels with a confidence in
	// [0, 1]; a message that expresses nothing in particular is neutral.
	// Errors: EUNAVAILABLE or EUPSTREAM when a model server fails.
	ClassifyEmotion(ctx context.Context, text string) (*Emotion, error)
}

// TagEmotions sets the emotion of every user message of msgs that has
// none, with c. A message c cannot classify keeps none, and the first
// error is returned after the others are tagged, so that a caller may
// store the messages anyway.
func TagEmotions(ctx context.Context, c EmotionClassifier, msgs []Message) error {
	if c == nil {
		return nil
	}
	var first error
	for i := range msgs {
		if msgs[i].Role != RoleUser || msgs[i].Emotion != nil {
			continue
		}
		e, err := c.ClassifyEmotion(ctx, msgs[i].Text)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		msgs[i].Emotion = e
	}
	return first
}

// ActionInput is a user's message to read actions from, with the agent's
// turn just before it ("Have you seen Heat?" makes "Yes, twice" an
// answer about Heat).
type ActionInput struct {
	Message string `json:"message"`
	Asked   string `json:"asked,omitempty"`
}

// ReportedAction is something a user says they did with a title: watched
// it, liked it, gave up on it, rated it. Title is the name as the message
// (or the question it answers) gives it; TitleID is the catalog id when
// the provider resolved it. Value is the rating of EventRated, 0.5 to 5.
type ReportedAction struct {
	Type    EventType `json:"type"`
	Title   string    `json:"title"`
	TitleID string    `json:"titleId,omitempty"`
	Value   *float64  `json:"value,omitempty"`
}

// ActionReader reads the actions a user reports in a message ("I watched
// Heat and loved it": watched and liked Heat). Package profile turns them
// into events. A request ("want something like Heat"), a question or a
// denial ("I haven't seen Heat") reports none.
type ActionReader interface {
	// ReadActions returns the actions in order, at most one per type and
	// title. Errors: EUNAVAILABLE when a model server fails, EUPSTREAM
	// when its answer stays unusable.
	ReadActions(ctx context.Context, in ActionInput) ([]ReportedAction, error)
}

// ModelTaskReadActions names the ActionReader task, as ModelTask* name
// the others.
const ModelTaskReadActions = "actions"

// LanguageModel is every task together, as a provider implements them.
type LanguageModel interface {
	RequestUnderstander
	Sentinel
	FactExtractor
	ExtractionReviewer
	Attributor
	Aggregator
	MergeReviewer
	Summariser
	PreferenceExtractor
	ClusterDescriber
	ReplyWriter
	// Name says which provider and model this is, for logs and `version`.
	Name() string
}

// Embedder turns text into vectors. Vectors of different embedders (by ID)
// are never compared.
type Embedder interface {
	// ID names the embedder, its version and dimension, such as
	// "offline-hash/v1/256".
	ID() string
	Dim() int
	// Embed returns one L2-normalised vector per text. Errors: EUNAVAILABLE.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
