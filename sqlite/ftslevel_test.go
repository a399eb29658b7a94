package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// An index written in bulk and merged has its segments far below the
// level their size warrants; LevelFullText raises the largest to it,
// keeps every row findable as before, leaves no trace of its own row,
// and has nothing to do the second time.
func TestLevelFullText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.ftsMerge.close() // the test merges itself
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "bulk"}
	at := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(7, 19))
	const perLoad, loads = 6000, 3
	for load := range loads {
		err := db.Bulk(ctx, func(b *Bulk) error {
			thread := fmt.Sprintf("t%d", load)
			if load == 0 {
				if err := b.User(s); err != nil {
					return err
				}
			}
			if err := b.Thread(s, thread, perLoad, at); err != nil {
				return err
			}
			for i := 1; i <= perLoad; i++ {
				text := "the keeper"
				for range 8 {
					text += fmt.Sprintf(" w%d", rng.IntN(3000))
				}
				m := memento.Message{ID: fmt.Sprintf("m%d-%d", load, i), Thread: thread, Seq: int64(i), Role: memento.RoleUser, Text: text, At: at.Add(time.Duration(i) * time.Second)}
				if err := b.Message(s, m, nil, ""); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.MergeFullText(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := ftsStructure(ctx, db.read, "message_search")
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != segments(t, db, "message_search") {
		t.Fatalf("the structure has %d segments (%+v), the index's %%_idx %d", len(before), before, segments(t, db, "message_search"))
	}
	if _, low, _ := ftsLow(before); !low {
		t.Fatalf("segments after the bulk loads and merges: %+v; the test needs the largest below log4 of the pages", before)
	}
	words := []string{"w7", "w123", "w2999", "keeper"}
	found := func() map[string][]string {
		out := map[string][]string{}
		for _, w := range words {
			hits, err := db.SearchMessages(ctx, s, w, perLoad*loads)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				out[w] = append(out[w], h.Message.ID)
			}
			slices.Sort(out[w])
		}
		return out
	}
	was := found()

	rewrites, err := db.LevelFullText(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ftsStructure(ctx, db.read, "message_search")
	if err != nil {
		t.Fatal(err)
	}
	pages, _, _ := ftsLow(after)
	if rewrites < 2 || len(after) != 1 || after[0].level < ftsWantLevel(pages) {
		t.Fatalf("%d rewrites left %+v (%d pages, level %d wanted); want one segment at that level, after two rewrites at least", rewrites, after, pages, ftsWantLevel(pages))
	}
	now := found()
	for _, w := range words {
		if !slices.Equal(now[w], was[w]) || len(now[w]) == 0 {
			t.Errorf("%q found %d messages after leveling, %d before (or none)", w, len(now[w]), len(was[w]))
		}
	}
	if len(now["keeper"]) != perLoad*loads {
		t.Errorf("keeper found %d messages, want all %d", len(now["keeper"]), perLoad*loads)
	}
	var left int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM message_search WHERE message_search MATCH 'scope:mementolevel' OR rowid = ?`, ftsLevelRow).Scan(&left); err != nil || left != 0 {
		t.Errorf("the leveling's own row: %d left (%v), want none", left, err)
	}
	if again, err := db.LevelFullText(ctx); err != nil || again != 0 {
		t.Errorf("leveling again: %d rewrites (%v), want none", again, err)
	}
	t.Logf("%d rewrites: %+v to %+v", rewrites, before, after)
}

// The structure records's varints, as SQLite writes them.
func TestFTSVarint(t *testing.T) {
	for _, c := range []struct {
		b []byte
		v uint64
		n int
	}{
		{[]byte{0x05}, 5, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0xff, 0x7f}, 1<<14 - 1, 2},
		{[]byte{0x81, 0x80, 0x00}, 1 << 14, 3},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 1, 9},
		{[]byte{0x81}, 0, 0}, // cut short
	} {
		if v, n := ftsVarint(c.b); v != c.v || n != c.n {
			t.Errorf("ftsVarint(% x) = %d, %d; want %d, %d", c.b, v, n, c.v, c.n)
		}
	}
	for pages, want := range map[int]int{1: 0, 3: 0, 4: 1, 15: 1, 16: 2, 21829: 7, 1 << 20: 10} {
		if got := ftsWantLevel(pages); got != want {
			t.Errorf("ftsWantLevel(%d) = %d, want %d", pages, got, want)
		}
	}
}
