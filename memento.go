package memento

import (
	"context"
	"time"
)

// DefaultTenant is the tenant every request belongs to unless it names
// another. It exists in every store from the first migration on.
const DefaultTenant = "default"

// Scope names the owner of per-user data. Every read and write of such data
// is scoped by tenant and user, so nothing crosses between them.
type Scope struct {
	Tenant string `json:"tenant"`
	User   string `json:"user"`
}

// User is a person an agent talks to.
type User struct {
	Tenant    string    `json:"tenant"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
}

// Thread is one conversation of a user.
type Thread struct {
	Tenant    string    `json:"tenant"`
	User      string    `json:"user"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Role says who wrote a message.
type Role string

// The roles a message may have.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleUser || r == RoleAssistant }

// Message is one utterance in a thread. ID is the client's id when it gave
// one (which makes writes idempotent) or one the store made up. Seq orders the
// messages of a thread as the store received them.
type Message struct {
	Tenant    string    `json:"tenant,omitempty"`
	User      string    `json:"user,omitempty"`
	Thread    string    `json:"thread,omitempty"`
	ID        string    `json:"id"`
	Seq       int64     `json:"seq,omitempty"`
	Role      Role      `json:"role"`
	Text      string    `json:"text"`
	At        time.Time `json:"at"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// Emotion is what a user's message expresses, tagged when it is
	// written (the agent's turn, the message log); nil for the agent's
	// own messages and for messages stored before emotions were tagged.
	Emotion *Emotion `json:"emotion,omitempty"`
}

// Emotion is one of the seven basic emotions a message expresses, with the
// classifier's confidence in it.
type Emotion struct {
	// Label is one of EmotionLabels.
	Label string `json:"label"`
	// Confidence is in [0, 1].
	Confidence float64 `json:"confidence"`
}

// The emotion labels: Ekman's six basic emotions and neutral.
const (
	EmotionJoy      = "joy"
	EmotionSadness  = "sadness"
	EmotionAnger    = "anger"
	EmotionFear     = "fear"
	EmotionSurprise = "surprise"
	EmotionDisgust  = "disgust"
	EmotionNeutral  = "neutral"
)

// EmotionLabels lists every emotion label in a stable order.
var EmotionLabels = []string{EmotionJoy, EmotionSadness, EmotionAnger, EmotionFear, EmotionSurprise, EmotionDisgust, EmotionNeutral}

// ValidEmotion reports whether label is one of EmotionLabels.
func ValidEmotion(label string) bool {
	for _, l := range EmotionLabels {
		if l == label {
			return true
		}
	}
	return false
}

// Negative reports whether the emotion is one a person shows when things
// keep going wrong for them (anger, disgust, sadness), held with at least
// confidence min.
func (e *Emotion) Negative(min float64) bool {
	if e == nil || e.Confidence < min {
		return false
	}
	return e.Label == EmotionAnger || e.Label == EmotionDisgust || e.Label == EmotionSadness
}

// EventType is the kind of action a user took on a title.
type EventType string

// The event types learners understand.
const (
	EventWatched     EventType = "watched"
	EventRated       EventType = "rated"
	EventLiked       EventType = "liked"
	EventDisliked    EventType = "disliked"
	EventWatchlisted EventType = "watchlisted"
	EventSkipped     EventType = "skipped"
	EventAbandoned   EventType = "abandoned"
	EventFinished    EventType = "finished"
)

// EventTypes lists every known event type in a stable order.
var EventTypes = []EventType{EventWatched, EventRated, EventLiked, EventDisliked,
	EventWatchlisted, EventSkipped, EventAbandoned, EventFinished}

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool {
	for _, v := range EventTypes {
		if t == v {
			return true
		}
	}
	return false
}

// Event is an action a user took on a catalog title. Value is the rating for
// rated (0.5 to 5) and the fraction watched for abandoned; other types leave
// it nil.
type Event struct {
	Tenant    string    `json:"tenant,omitempty"`
	User      string    `json:"user,omitempty"`
	ID        string    `json:"id"`
	Type      EventType `json:"type"`
	TitleID   string    `json:"title"`
	Value     *float64  `json:"value,omitempty"`
	At        time.Time `json:"at"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// Title types used by the catalog. Importers keep whatever type their source
// names (IMDb has more, such as tvMiniSeries); these are the ones the agent
// asks for.
const (
	TypeMovie    = "movie"
	TypeTVSeries = "tvSeries"
)

// Title is one entry of the catalog. ID is a stable string that names its
// source, such as "wiki:The_Avengers_(2012_film)", "imdb:tt0111161" or
// "ml:1".
type Title struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	Type           string   `json:"type"`
	Year           int      `json:"year,omitempty"`
	EndYear        int      `json:"endYear,omitempty"`
	Genres         []string `json:"genres"`
	Cast           []string `json:"cast"`
	Overview       string   `json:"overview,omitempty"`
	RuntimeMinutes int      `json:"runtimeMinutes,omitempty"`
	IsAdult        bool     `json:"isAdult,omitempty"`
	Href           string   `json:"href,omitempty"`
	// Notability is how well known the title is, from 0 to 1: a prior the
	// catalog computes from its own data when it is built or imported
	// (the plot's length, the cast and how prolific it is, the article's
	// signals, or ratings and vote counts where a source has them). Search
	// ranks by it where relevance does not decide, and the agent draws
	// its candidates by it.
	Notability float64 `json:"notability,omitempty"`
}

// Summary is one entry of a thread's rolling summary list. Each covers the
// thread's messages from FromSeq to ToSeq and replaces, for a prompt, every
// summary before it.
type Summary struct {
	ID        int64     `json:"id"`
	Thread    string    `json:"thread"`
	Text      string    `json:"text"`
	FromSeq   int64     `json:"fromSeq"`
	ToSeq     int64     `json:"toSeq"`
	Sources   []string  `json:"sources"`
	CreatedAt time.Time `json:"createdAt"`
}

// Clock tells the time. Components take one so tests can fix it.
type Clock interface {
	Now() time.Time
}

// SystemClock is the Clock of the wall.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// Pinger is implemented by dependencies whose health /healthz reports.
type Pinger interface {
	// Ping returns nil when the dependency answers. Errors: EUNAVAILABLE.
	Ping(ctx context.Context) error
}
