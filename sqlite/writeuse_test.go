package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
)

func TestWriteFuncName(t *testing.T) {
	for full, want := range map[string]string{
		"github.com/memento-ai/memento/sqlite.(*DB).WriteMemoryBatch.func1":   "WriteMemoryBatch",
		"github.com/memento-ai/memento/sqlite.(*ftsMerger).mergeOnce.func1.2": "ftsMerger.mergeOnce",
		"github.com/memento-ai/memento/sqlite.(*intake).move.func3":           "intake.move",
		"github.com/memento-ai/memento/sqlite.(*DB).completeJob-fm":           "completeJob",
		"github.com/memento-ai/memento/sqlite.TestX.func1":                    "TestX",
		"github.com/memento-ai/memento/sqlite.(*DB).functional.func2":         "functional",
		"github.com/memento-ai/memento/sqlite.writeAll":                       "writeAll",
		"github.com/memento-ai/memento/sqlite.(step).Finish.func1":            "step.Finish",
	} {
		if got := writeFuncName(full); got != want {
			t.Errorf("writeFuncName(%q) = %q, want %q", full, got, want)
		}
	}
}

// The writer's time is counted by the operation that sent each write,
// the writes that failed with the rest, and two writers at once on the
// same thread count each of theirs.
func TestWriterTimeByWrite(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	db.ftsMerge.close() // its merges would count too
	ctx := context.Background()
	s := memento.Scope{Tenant: "t", User: "u"}
	const each = 10
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range each {
				_, err := db.AppendMessages(ctx, s, "th", []memento.Message{{ID: msgID(w, i), Role: memento.RoleUser, Text: "a message"}}, nil)
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	before := db.WriterStats()
	// The same id with another text is refused inside the write.
	_, err := db.AppendMessages(ctx, s, "th", []memento.Message{{ID: msgID(0, 0), Role: memento.RoleUser, Text: "another text"}}, nil)
	if err == nil {
		t.Fatal("a second message under one id was stored")
	}
	failing := errors.New("refused")
	if err := db.groupTx(ctx, func(context.Context, *sql.Tx) error { return failing }); !errors.Is(err, failing) {
		t.Fatalf("groupTx = %v, want the write's error", err)
	}
	after := db.WriterStats()

	appends := before.ByWrite["AppendMessages"]
	if appends.Writes != 2*each || appends.Seconds <= 0 {
		t.Errorf("AppendMessages before the failures: %+v, want %d writes that took time", appends, 2*each)
	}
	for name := range after.ByWrite {
		if name != "AppendMessages" && name != "TestWriterTimeByWrite" {
			t.Errorf("a write named %q", name)
		}
	}
	d := after.Sub(before)
	if d.Writes != 0 {
		t.Errorf("%d writes committed by two that failed", d.Writes)
	}
	if got := d.ByWrite["AppendMessages"].Writes; got != 1 {
		t.Errorf("the refused append counted %d times, want 1", got)
	}
	if got := d.ByWrite["TestWriterTimeByWrite"].Writes; got != 1 {
		t.Errorf("the failed write counted %d times, want 1 (by write: %v)", got, d.ByWrite)
	}
	var secs float64
	for _, u := range after.ByWrite {
		secs += u.Seconds
	}
	if secs > after.BusySeconds {
		t.Errorf("the writes took %.6f s of a writer busy %.6f s", secs, after.BusySeconds)
	}
}

func msgID(w, i int) string { return string(rune('a'+w)) + "-" + string(rune('a'+i)) }
