package memento

import (
	"context"
	"time"
)

// VectorText is a text to embed for recall: a memory's value or a
// message's text, by id.
type VectorText struct {
	ID   string
	Text string
}

// VectorStore keeps the embeddings recall ranks by, one per memory and
// message and embedder, so that a change of embedder (or an import, or an
// edit) is followed by a back-fill rather than a full rewrite.
type VectorStore interface {
	// MissingVectors lists the user's current memories and messages that
	// have no embedding by the named embedder (none yet, or one by another
	// embedder), at most limit of each. Errors: EINVALID.
	MissingVectors(ctx context.Context, s Scope, embedder string, limit int) (memories, messages []VectorText, err error)
	// PutVectors stores embeddings by the named embedder, by memory and
	// message id; ids the user does not have are skipped. Errors:
	// EINVALID.
	PutVectors(ctx context.Context, s Scope, embedder string, memories, messages map[string][]float32) error
}

// RecallChangePruner trims the recall change log that keeps every
// process's warm recall index fresh. A process that runs the background
// workers calls it now and then; an index whose position falls below the
// log's floor reads its user again in full.
type RecallChangePruner interface {
	// PruneRecallChanges deletes the changes older than keep and returns
	// how many rows went.
	PruneRecallChanges(ctx context.Context, keep time.Duration) (int64, error)
}

// DefaultRecallChangesKept is how much of the recall change log the
// pruner keeps: far longer than any process's index goes without reading
// it, so pruning never forces a full read in practice.
const DefaultRecallChangesKept = 15 * time.Minute
