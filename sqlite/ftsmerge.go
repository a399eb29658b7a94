package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento/internal/jobctx"
)

// Merging the full-text indexes' segments.
//
// Each transaction that adds rows to a full-text index writes them as a
// new segment of that index, and a query reads every segment. FTS5 keeps
// the count down by merging segments a little after each write
// (automerge), inside the writing transaction, so an append that happened
// to come after enough others paid for their merge while acknowledgements
// waited behind it. Migration 0015 turns automerge off and the merger
// below does the work instead: while the store is written it asks each
// index to merge a bounded amount ('merge', ftsMergePages pages of
// about a kilobyte), each as a background write of its own, which the
// committer runs after the writes somebody waits on and without waiting
// for the disk (durability.go). It asks again at once while an index
// still had work, and rests when none has. Should the merger fall
// behind, FTS5 still merges a level that reaches 16 segments inside the
// write that makes it so ('crisismerge'), as before.

// ftsIndexes are the full-text indexes the merger keeps merged.
var ftsIndexes = []string{"message_search", "memories_fts"}

// Settings of the merger.
const (
	// ftsMergePages is the work of one merge request per index: a
	// millisecond or a few of the writer, which an acknowledgement that
	// arrives meanwhile waits for (64 pages took up to 15 ms at a million
	// memories).
	ftsMergePages = 16
	// ftsMergeEvery is how often the merger looks for writes.
	ftsMergeEvery = 200 * time.Millisecond
	// ftsMergeRounds bounds the back-to-back requests of one look: the
	// writes keep their share of the writer under a long merge.
	ftsMergeRounds = 64
)

// ftsMerger merges the full-text indexes of a DB in the background.
type ftsMerger struct {
	db     *DB
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	merges atomic.Int64 // requests that merged something, for tests
}

// startFTSMerger starts the merger of db's full-text indexes.
func (db *DB) startFTSMerger() {
	m := &ftsMerger{db: db, stop: make(chan struct{}), done: make(chan struct{})}
	db.ftsMerge = m
	go m.loop()
}

// close stops the merger and waits for it.
func (m *ftsMerger) close() {
	m.once.Do(func() { close(m.stop) })
	<-m.done
}

// loop merges while the store is written, until close.
func (m *ftsMerger) loop() {
	defer close(m.done)
	t := time.NewTicker(ftsMergeEvery)
	defer t.Stop()
	// An idle store is left alone: segments an earlier process left
	// unmerged are merged after the next write.
	seen := m.db.commits.requests.Load()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		if m.db.commits.requests.Load() == seen {
			continue
		}
		for range ftsMergeRounds {
			worked, err := m.mergeOnce()
			if err != nil {
				m.db.logger.Warn("sqlite: merging the full-text indexes failed; FTS5 merges inside the writes meanwhile", "err", err)
				break
			}
			if !worked {
				// Nothing left to merge: the store's writes up to
				// here, this request of the merger's own included,
				// are merged.
				seen = m.db.commits.requests.Load()
				break
			}
			select {
			case <-m.stop:
				return
			default:
			}
		}
	}
}

// mergeOnce asks each index for one bounded merge, each in a background
// write of its own (a write that merged both held the writer twice as
// long, and every acknowledgement that arrived meanwhile waited for it),
// and reports whether any of them merged something.
func (m *ftsMerger) mergeOnce() (bool, error) {
	ctx := jobctx.With(context.Background())
	var merged bool
	for _, index := range ftsIndexes {
		var worked bool
		err := m.db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			var before, after int64
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+index+` (`+index+`, rank) VALUES ('merge', ?)`, ftsMergePages); err != nil {
				return fmt.Errorf("merge %s: %w", index, err)
			}
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			worked = after > before+1
			return nil
		})
		if err != nil {
			return merged, err
		}
		merged = merged || worked
	}
	if merged {
		m.merges.Add(1)
	}
	return merged, nil
}

// MergeFullText merges the full-text indexes until neither has work
// left, one bounded merge per write as the merger does, and returns how
// many of those writes merged something. A bulk load leaves the indexes
// in many segments, which the merger would otherwise merge while the
// store serves; a benchmark settles them first, so that what it measures
// does not include a merge debt of the load's (memento bench).
func (db *DB) MergeFullText(ctx context.Context) (int, error) {
	m := &ftsMerger{db: db}
	merged := 0
	for {
		if err := ctx.Err(); err != nil {
			return merged, err
		}
		worked, err := m.mergeOnce()
		if err != nil {
			return merged, fmt.Errorf("merge the full-text indexes: %w", err)
		}
		if !worked {
			return merged, nil
		}
		merged++
	}
}
