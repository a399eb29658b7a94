package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestConcurrentReadsAfterReopen fires many concurrent recall reads at a
// store just reopened, so that no read statement is prepared yet. Each
// read holds a read transaction; a transaction that took a second
// connection of the pool to prepare a statement waited for ever once every
// connection was held by such a transaction (the first concurrent chats
// after a restart hung). The context's deadline only turns a hang into a
// failure; nothing here is timed.
func TestConcurrentReadsAfterReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	users := make([]memento.Scope, 8)
	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := range users {
		users[i] = memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%d", i)}
		res, err := db.AppendMessages(ctx, users[i], "t1", []memento.Message{
			{ID: "m1", Role: memento.RoleUser, Text: "I love science fiction films", At: at},
			{ID: "m2", Role: memento.RoleUser, Text: "my partner prefers westerns", At: at.Add(time.Minute)},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.WriteMemories(ctx, users[i], memento.MemoryWrite{Message: res.Messages[0], Run: memento.MemoryRun{Message: "m1", Outcome: memento.RunStored},
			Insert: []memento.Memory{{ID: "g1", Attribute: "GENRE", Mode: memento.ModeSemantic, Value: "science fiction", ValidFrom: at, Sources: []string{"m1"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = sqlitetest.OpenPath(t, path, sqlitetest.Options())
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	const readers = 64
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for i := range readers {
		wg.Go(func() {
			s := users[i%len(users)]
			var err error
			switch i % 4 {
			case 0:
				_, err = db.RecallDocs(ctx, s, -1)
			case 1:
				_, err = db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: "science fiction", Keyword: 10, Recent: 10})
			case 2:
				_, err = db.MessageCandidates(ctx, s, memento.CandidateQuery{Query: "westerns", Keyword: 10, Recent: 10, Neighbors: 1})
			case 3:
				_, err = db.RecallDocs(ctx, s, 0)
			}
			if err != nil {
				errs <- fmt.Errorf("reader %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
