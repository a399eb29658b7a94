package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/engine"
)

// Example runs Memento inside a Go program: it opens the engine on a
// fresh SQLite file with the offline model and the embedded catalog,
// tells the agent about a taste, lets the background pipeline turn the
// message into memories, and reads them back.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memento-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg := engine.DefaultConfig()
	cfg.DB = filepath.Join(dir, "memento.db") // or postgres://user@host/db
	e, err := engine.Open(ctx, cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(ctx)
	if err := e.StartWorkers(ctx); err != nil {
		log.Fatal(err)
	}

	ag, err := e.Agent(ctx)
	if err != nil {
		log.Fatal(err)
	}
	ans, err := ag.Turn(ctx, cfg.Tenant, agent.Request{User: "ann", Thread: "t1", Message: "I love heist movies. Recommend 3 of them"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("titles shown:", len(ans.Titles))
	fmt.Println("genres in force:", ans.ActiveContext.Genres)

	// Memories form in the background; wait for the queue to settle.
	if err := e.WaitForJobs(ctx, time.Minute); err != nil {
		log.Fatal(err)
	}
	mems, err := e.Store.Memories(ctx, e.Scope("ann"), memento.MemoryFilter{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range mems {
		fmt.Printf("%s: %s (from message %s)\n", m.Attribute, m.Value, m.Sources[0])
	}
	// Output:
	// titles shown: 3
	// genres in force: [Crime]
	// GENRE: loves heist movies (from message turn:t1#1)
}
