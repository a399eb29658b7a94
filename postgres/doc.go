// Package postgres is Memento's store on PostgreSQL, for several stateless
// `memento serve` processes sharing one database: users, threads,
// messages, summaries, events, attribute memories with their history,
// recall's keyword index and change log, the background job queue
// (River, github.com/riverqueue/river, through its pgx v5 driver
// riverpgxv5), API keys and studies. *DB implements memento.UserService,
// MessageLog, ThreadService, EventService, TitleService, MemoryService,
// MemoryWriter, RecallStore, RecallCorpus, ProfileService,
// ProfileModelService, PreferenceService, Queue, KeyStore, LagReporter and
// Pinger with the semantics of package sqlite, and the rest of what the
// engine uses of *sqlite.DB (export and import, graph checkpoints, vector
// back-fill, recall change pruning, the snapshot write-behind's change
// scan, the pipeline's catch-up reads, the co-occurrence model's
// incremental event reads, job counts, the study store of
// Experiments), with the same signatures (but for SearchMessages, which
// returns this package's MessageHit). It passes every part of the
// conformance suite of package storetest (postgres_test.go). It is also a
// pipeline.RunLookup: a batch of a user's backlog reads at once which of
// its messages have runs and checkpoints, where each run would ask over
// the network twice.
//
// # How data flows
//
// Every write of a user's data runs one transaction (userTx) whose first
// statement takes the user's transaction-level advisory lock
// (pg_advisory_xact_lock of a hash of tenant and user), sent with the
// BEGIN as one simple query. It creates the
// tenant, user and thread rows as needed, inserts the rows, indexes new
// text for keyword search, and inserts the background jobs for the new
// rows into River's river_job with InsertManyTx on the same pgx.Tx, so a
// message and its jobs commit together or not at all. The lock serialises
// a user's writes across every process on the database: two turns on one
// thread both land, one after the other, with consecutive sequence
// numbers; a turn saved with CheckSeq from a stale state is refused with
// ECONFLICT (the agent retries the whole turn). Users do not wait for one
// another.
//
// A write's statements go to the server in as few round trips as what
// they read allows (pgx.Batch), each a wake-up of the writer's goroutine
// that may wait for a processor under load: an append in four (BEGIN with
// the lock, one statement making the tenant, user and thread exist and
// reading the thread's head, with the ids already stored, the messages
// with their keyword index, the thread's new head and their jobs in the
// user's backlog, COMMIT), a batch of a user's memory writes in three
// besides BEGIN and COMMIT whatever its number of messages (the messages
// and their runs, the current values the writes were computed from, then
// every write; each write's base is checked against what the writes
// before it leave), a batch of preference writes in one and one for each
// write that changes something (its version bump and rows, which come
// back as stored). TestBatchRoundTrips and TestAppendRoundTrips count
// them.
//
// # Queue
//
// Jobs carry {"tenant", "user", "payload"} as their args, as in package
// sqlite, so DeleteUser deletes a user's jobs in the transaction that
// deletes the user, found through an index on those two args (migration
// 0006). A started queue is a River client: River fetches jobs
// with FOR UPDATE SKIP LOCKED, so any number of processes may run queues
// on one database and each job is run by one of them; inserts wake every
// queue through LISTEN/NOTIFY (scoped by Options.Schema), and each polls
// every Options.PollInterval besides. Each started queue holds a lease in
// queue_processes (lease.go), renewed every fifth of Options.QueueLease
// (15s): the running jobs of a process whose lease expired, a server that
// died mid-job, are made available to the other queues within about one
// lease, with the death recorded among the job's errors. Options.MaxConns
// bounds each process's pool; River's notifier holds one connection of it
// while the queue runs. A job whose handler succeeded is marked completed
// at once, in a short transaction of its own (river.JobCompleteTx), not
// at River's completer's next batch, up to 250 ms later.
//
// A job enqueued by user (memento.JobRequest.ByUser) is a row of backlog,
// and one River job of kind memento.JobBacklog per user takes what has
// accumulated in one batch: any number of processes run batches, never
// two of one user at once (backlog.go).
//
// # Keyword search and vectors
//
// See search.go: the terms of package fulltext are stored per document
// and BM25 is computed in SQL exactly as SQLite's FTS5 bm25() computes it
// over the SQLite store's tables, so both stores rank alike. The corpus
// counters are split into 64 shards, and each write transaction counts
// into one that no other transaction under way holds (migration 0013), so
// writers of different users do not wait for each other's commits. The
// writer that indexes documents counts them itself, one statement a round
// trip (migration 0016: an append over its messages, a batch of memory
// writes over its memories); triggers count what leaves the index. A
// job's transaction adds its counts up and applies them as it commits,
// one update a term (migration 0015). pgvector is
// not assumed: embeddings are stored as little-endian float32 bytes and
// returned with the bounded candidate sets (memento.CandidateQuery), over
// which recall computes similarity in Go.
//
// # Recall change log
//
// See recall.go: every change of a memory or message is logged; one
// user's changes are numbered in commit order thanks to the user lock, so
// a warm index on any process reads every change of another process the
// next time it asks (RecallDocs), with no further delay. The triggers on
// memories and vectors run once a statement over its rows (migration
// 0018), those on messages once an updated or deleted row; a message
// inserted is logged by the statement that inserts it, an append's or
// Bulk's (migration 0019).
//
// # A batch of memory writes
//
// See memory.go: a batch of a user's pipeline runs is written as a few
// statements over all its writes, whatever their number (batchPlan): the
// closes of memories stored before it, one insert of its memories (one a
// later write closes is inserted closed), their count, the runs, the
// messages' vectors. Go settles what the writes' order decided, so the
// store is left as by the writes one after the other (storetest's
// MemoryBatchAsOneByOne).
//
// # Events mark
//
// See profile.go: every event takes a mark from one sequence under its
// tenant's events lock (shared among writers), and a reader of marks takes
// that lock exclusively for one statement, so a mark it reads has no
// uncommitted event below it and the co-occurrence model's incremental
// reads (EachUserEventsSince) never step over an event that commits late.
//
// # Studies and keys
//
// Experiments returns the study store (experiment.go). An enrolment locks
// its study's row before counting the arms, so balanced assignment stays
// balanced across processes. API keys (keys.go) are kept by their SHA-256.
//
// # Tables
//
// migrations/NNNN_what.sql, applied in the order of their numbers (gaps
// allowed, a number used twice refused) at Open, each in its own
// transaction, under an advisory lock (processes may start at once), and
// recorded in schema_migrations. River's migrations run first, so the
// store's may index River's tables. Times are BIGINT nanoseconds since the
// Unix epoch, as in SQLite, so times survive to the nanosecond and a copy
// between the stores is exact.
//
// # Message search
//
// SearchMessages ranks a user's messages over recall's keyword index
// (message_search.go); it returns MessageHit, the twin of
// sqlite.MessageHit.
//
// # Tests
//
// The tests run when MEMENTO_TEST_POSTGRES names a database (CI sets it);
// each opens its store in a schema of its own, dropped afterwards.
package postgres
