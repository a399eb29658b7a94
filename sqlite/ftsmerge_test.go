package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// segments counts the segments of a full-text index.
func segments(t *testing.T, db *DB, index string) int {
	t.Helper()
	var n int
	if err := db.read.QueryRowContext(context.Background(), `SELECT count(DISTINCT segid) FROM `+index+`_idx`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFTSMergerKeepsSegmentsFew appends messages one transaction at a
// time, each a new segment of the message index: with FTS5's own
// merging off (migration 0015), the merger brings the segments down to a
// few per level once the writes stop, where without it they pile up to
// FTS5's crisis limit; search finds every message either way.
func TestFTSMergerKeepsSegmentsFew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const messages = 60
	fill := func(db *DB) {
		t.Helper()
		s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
		for i := range messages {
			text := fmt.Sprintf("message %d about the lighthouse keeper", i)
			if _, err := db.AppendMessages(ctx, s, "t", []memento.Message{{Role: memento.RoleUser, Text: text}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		hits, err := db.SearchMessages(ctx, s, "lighthouse", 2*messages)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != messages {
			t.Fatalf("search found %d messages, want %d", len(hits), messages)
		}
	}

	idle := openInternal(t, Options{})
	idle.ftsMerge.close() // FTS5's own merging is off and nobody merges
	fill(idle)
	piled := segments(t, idle, "message_search")

	db := openInternal(t, Options{})
	fill(db)
	deadline := time.Now().Add(30 * time.Second)
	for segments(t, db, "message_search") > 6 {
		if time.Now().After(deadline) {
			t.Fatalf("segments after the writes stopped: %d, want at most 6 (%d merges)",
				segments(t, db, "message_search"), db.ftsMerge.merges.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if piled <= 8 {
		t.Fatalf("without the merger %d segments; the test needs writes that pile up more than the merger leaves", piled)
	}
	// The merger counts a merge after its commit, which a reader may see
	// first: wait for the count as for the segments.
	for db.ftsMerge.merges.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the segments are few but the merger merged nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("segments of message_search: %d without the merger, %d with it (%d merges)", piled, segments(t, db, "message_search"), db.ftsMerge.merges.Load())
	// Once merged, an idle store is left alone: the merger's own
	// requests do not count as writes to merge after, so it comes to
	// rest (a merger that kept asking would write every tick).
	for {
		before := db.commits.requests.Load()
		time.Sleep(3 * ftsMergeEvery)
		if db.commits.requests.Load() == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the merger keeps writing to an idle store")
		}
	}
}

// MergeFullText merges what the writes piled up, at once, until no index
// has work left; search finds the same messages after.
func TestMergeFullText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.ftsMerge.close() // nobody merges meanwhile
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	const messages = 60
	for i := range messages {
		text := fmt.Sprintf("message %d about the lighthouse keeper", i)
		if _, err := db.AppendMessages(ctx, s, "t", []memento.Message{{Role: memento.RoleUser, Text: text}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	piled := segments(t, db, "message_search")
	n, err := db.MergeFullText(ctx)
	if err != nil {
		t.Fatal(err)
	}
	merged := segments(t, db, "message_search")
	if n == 0 || merged > 6 || merged >= piled {
		t.Fatalf("%d merges took the segments from %d to %d; want some merges and at most 6 left", n, piled, merged)
	}
	if again, err := db.MergeFullText(ctx); err != nil || again != 0 {
		t.Fatalf("merging a merged store: %d merges, %v; want none", again, err)
	}
	hits, err := db.SearchMessages(ctx, s, "lighthouse", 2*messages)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != messages {
		t.Fatalf("search found %d messages after the merge, want %d", len(hits), messages)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.MergeFullText(cancelled); err == nil {
		t.Fatal("a cancelled merge returned no error")
	}
	t.Logf("%d merges: %d segments to %d", n, piled, merged)
}
