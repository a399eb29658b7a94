package memento

import (
	"context"
	"time"
)

// Kinds of recalled items.
const (
	RecallAttribute  = "attribute"  // a semantic attribute memory (current value)
	RecallEpisode    = "episode"    // an episodic memory
	RecallMessage    = "message"    // a past message of the user's threads
	RecallPreference = "preference" // a signed preference concept
	RecallCluster    = "cluster"    // a cluster of preferences with its description
	RecallSummary    = "summary"    // a thread summary
	RecallProfile    = "profile"    // a profile key learned from actions
)

// RecallQuery asks for the memories relevant to a query.
type RecallQuery struct {
	Scope  Scope
	Thread string // optional: the thread the query comes from
	Query  string
	K      int
	Now    time.Time
	// Vector is the query's embedding by the embedder named Embedder, when
	// the caller computed it once for several recallers; a recaller whose
	// embedder differs embeds the query itself.
	Vector   []float32 `json:"-"`
	Embedder string    `json:"-"`
}

// RecallItem is one memory brought back for a prompt, with how it scored
// and where it came from.
type RecallItem struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Score orders items across sources; Scores breaks it down (bm25,
	// vector, recency, weight, ...).
	Score   float64            `json:"score"`
	Scores  map[string]float64 `json:"scores"`
	Sources []string           `json:"sources"`
	At      *time.Time         `json:"at,omitempty"`
}

// Recaller brings back memories of one kind. The context assembler merges
// the items of several recallers by score; no recaller calls a language
// model.
type Recaller interface {
	// Recall returns at most q.K items, best first. Errors: EINVALID.
	Recall(ctx context.Context, q RecallQuery) ([]RecallItem, error)
}
