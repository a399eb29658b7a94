// Package engine composes Memento: it opens the store a configuration
// names (an SQLite file or a PostgreSQL URL), the catalog, the language
// model and embedder, and from them the recommendation agent, the
// attribute-memory pipeline, the preference and profile memories, recall
// with its warm index, the snapshot copies, and the background workers
// that turn the message log into memories. The memento command is flags
// and output over it, and a Go program embeds Memento in-process the same
// way (example_test.go runs this):
//
//	e, err := engine.Open(ctx, engine.DefaultConfig(), nil)
//	if err != nil { ... }
//	defer e.Close(ctx)
//	if err := e.StartWorkers(ctx); err != nil { ... }
//	ag, err := e.Agent(ctx)
//	ans, err := ag.Turn(ctx, e.Config.Tenant, agent.Request{User: "ann", Thread: "t1", Message: "Recommend 3 heist movies"})
//	mems, err := e.Store.Memories(ctx, e.Scope("ann"), memento.MemoryFilter{})
//
// A message's background jobs (MessageJobs) go to its user's backlog: the
// queue hands a user's accumulated jobs to one batch (backlog.go), which
// forms each message's memories in the order the messages were stored and
// then writes the batch's preferences and events in one transaction each.
//
// Every component is built on first use and shared afterwards, so a
// command that lists memories never loads the catalog, and the agent and
// the API share one warm recall index. Close stops the workers and closes
// the store, in the reverse order of opening.
package engine
