// Package sqlite is Memento's embedded store: users, threads, messages,
// summaries, events, catalog titles and the background job queue, all in
// one SQLite file, through the pure-Go driver modernc.org/sqlite (no cgo).
// *DB implements memento.UserService, MessageLog, ThreadService,
// EventService, TitleService, Queue and Pinger.
//
// # How data flows
//
// A write (SaveTurn, AddEvents, ...) validates its input, then runs one
// transaction on the writer connection: it creates the tenant, user and
// thread rows as needed, inserts the rows, and inserts the background jobs
// for the new rows into River's river_job table with River's InsertManyTx
// on the same *sql.Tx. The call returns only after COMMIT, so a message and
// its jobs are durable together or not at all. The writes that come many
// at a time, the pipeline's WriteMemories and graph checkpoints,
// WritePreferences and AddEvents, share their commits (see Group commit);
// the others run a transaction of their own.
//
// # The intake
//
// With Options.Intake, AppendMessages is acknowledged without the store's
// writer, which the background jobs keep busy: the messages, with their numbers in the
// thread and their jobs (as JSON), are written to a second SQLite file
// beside the store, the intake (the store's path with "-intake"), by a
// writer and a group commit of its own, and the call returns once that
// commit is on disk (its log synced after it, as for the store). A mover
// then writes them to the store in order, as an append used to (user,
// thread, messages, jobs), in batches that commit without waiting for the
// disk; the intake forgets them once a sync of the store's log after that
// commit has ended. A crash in between leaves rows that the next Open
// moves again; a message whose id the store holds is skipped with its
// jobs. Every read and write of a user (except a background job's) first
// waits until the user's messages acknowledged before it have reached the
// store, so nothing acknowledged is ever missing from an answer. An
// append and a turn of one thread number its messages under one lock, so
// the numbers an append answers are the ones stored. One process at a
// time moves the intake (a lock file beside it); another process on the
// same file appends to it too, waits on the progress the owner records,
// and takes the intake over when the owner stops. Unfinished, QueueLag and JobStats count the
// messages still in the intake under the kind "intake". A store opened
// without the option first moves what an earlier run with it left in the
// intake, so turning it off loses nothing. It is off by
// default: measured at 1.1 M memories it cut the acknowledgement's 99th
// percentile at 500 appends a second by two thirds but doubled the time
// until the messages' memories exist (docs/BENCHMARKS.md).
//
// What an acknowledgement from the intake still waits for is the sync of
// the intake's log, and on the store's disk that sync also waits for what
// the store wrote to the disk's cache. Options.IntakePath puts the intake
// on another device (one of its own, or one whose cache survives a power
// loss); the store records the place beside itself, so that any later
// start finds what the intake holds, and a start given another place
// first moves the recorded intake's messages to the store
// (intakeplace.go).
//
// The queue is River (github.com/riverqueue/river) with its SQLite driver.
// Jobs can be enqueued whether or not the queue runs (an insert-only River
// client exists from Open on), so a CLI that only writes leaves its jobs in
// the table. Handle registers a memento.JobHandler per kind; Start builds a
// River client whose workers call the handlers. Every kind uses one Go args
// type whose Kind() is held in the value, and whose JSON is
//
//	{"tenant": "...", "user": "...", "payload": <the JobRequest's payload>}
//
// The handler receives the payload only. The scope in the envelope is how
// DeleteUser finds a user's jobs: it deletes the rows of river_job whose
// args name the tenant and user (json_extract over River's JSONB args), in
// the transaction that deletes the user, except jobs running at that moment.
// The queue polls (River's PollOnly mode) every Options.PollInterval, 50ms
// by default, and retries failed jobs with River's backoff or
// Options.RetryDelay until their attempts run out; then they are
// "discarded", which Jobs reports as failed, with every attempt's error.
// Jobs of kinds this process has no handler for are left for a process
// that has one. A job whose handler succeeded is marked completed in the
// writer's next group commit (river.JobCompleteTx), before its worker
// takes another job: River's own completer records completions in
// batches, every 250 ms when fewer than a hundred wait, and an ended job
// would count as running (Unfinished, the queue's lag) until then.
//
// A job enqueued by user (memento.JobRequest.ByUser: a message's remember,
// preference and message-event jobs, and a turn's summary) is a row of the backlog table
// instead, and one River job of kind memento.JobBacklog per user takes
// what has accumulated, in order, in one call of the handler registered
// with HandleBacklog, one batch of a user at a time across the processes
// on the file (backlog.go).
//
// Reads (ThreadState, Messages, Events, SearchMessages, Jobs, ...) go to a
// separate pool of read-only connections and never wait for the writer.
//
// The full-text indexes (message_search, memories_fts) do
// not merge their segments inside the writes that add them: migration
// 0015 turns FTS5's automerge off, and a background merger asks each
// index for a bounded merge while the store is written (ftsmerge.go).
// A write adds a segment to an index for each statement that opens a
// statement savepoint (one that fires a trigger, returns rows or inserts
// several) after it added rows to that index, so the writes add their
// memories to memories_fts with one statement after their others
// (migration 0019, memory.go), and insert messages with multi-row
// statements (message.go).
//
// # Connections
//
// The writer pool has exactly one connection (SetMaxOpenConns(1)): SQLite
// allows one writer at a time anyway, and River's SQLite driver needs a
// single connection to avoid SQLITE_BUSY between its own goroutines. Its
// transactions begin IMMEDIATE (_txlock=immediate), taking the write lock
// at BEGIN, so a transaction never fails halfway when it upgrades from
// reading to writing. The reader pool (Options.ReadConns, default 4) opens
// the file with mode=ro; in WAL mode readers see the last committed state
// and do not block the writer or each other. A ":memory:" database exists
// only inside one connection, so there the readers share the writer pool.
//
// Every connection sets busy_timeout (Options.BusyTimeout, 10s) and
// foreign_keys=ON; the writer sets journal_mode=WAL (and the settings of
// Writer settings below). A third connection of its own serves the
// background checkpointer.
//
// The writer's and readers' connections keep the statements they run
// often (stmtconn.go): a SELECT, INSERT, UPDATE, DELETE, REPLACE or WITH
// text run twice on a connection is kept prepared there, up to 256, so
// River's queries and the queries run as text are not parsed again on
// every call. PRAGMAs are always parsed anew.
//
// # Group commit
//
// An fsynced COMMIT (its pages written to the log, then an fsync) costs
// half a millisecond to a millisecond here, several times the 0.15ms of
// the statements of a pipeline run's write, so one commit per write capped
// the pipeline at a few hundred messages a second. AppendMessages,
// WriteMemories and the graph checkpointer's Save and Delete therefore
// hand their transaction body to the committer (commit.go): one goroutine,
// started by Open, that takes the first waiting request, begins a
// transaction, and runs that request and every request that arrives while
// the batch runs (up to 256 of them, or 2ms of statements, so a quick
// write never waits long behind slow ones) each inside its own SAVEPOINT.
// A request that fails is rolled back to its savepoint and its error goes
// to its caller alone; then the transaction is committed once and every
// caller in it is answered. A lone write waits for nothing: the batch
// starts as soon as the writer is free, and is just that write.
//
// The semantics are a solo transaction's:
//
//   - A call returns success only after the COMMIT that made its rows
//     durable; an error means none of its rows were written.
//   - Checks run inside the transaction, as before: a known message id is
//     skipped, a run is recorded once, a changed base value is ECONFLICT,
//     a UNIQUE violation rolls back its request only.
//   - A caller whose context ends while its request waits withdraws it
//     (nothing is written, the call returns the context's error); once its
//     request has started it waits for the batch, whose statements run
//     with a context that is not cancelled, since an interrupted statement
//     would roll back the whole transaction.
//   - When SQLite ends the whole transaction (an I/O error, a full disk:
//     rolling back to the savepoint then fails), the request at fault gets
//     the error and the requests that ran before it run again in a new
//     transaction; transaction bodies therefore reset what they report at
//     their start.
//
// So do the background's writes that come one at a time: the tenant's
// co-occurrence model (SaveProfileModel, megabytes, which in a transaction
// of its own held the writer through its sync for tens of ms while
// acknowledgements waited; it is now written in parts of 256 KiB, each a
// write of its own, handed to the group commit in order at once, then
// made current by one small write) and the job queue's lease renewals. Bulk,
// migrations and the other writes use writeTx: one transaction each, on
// the same single writer connection, which River's queue shares too.
//
// # Checkpoints
//
// In WAL mode a commit appends pages to the log (the -wal file) and a
// checkpoint copies them back into the database file, then fsyncs it.
// SQLite's automatic checkpoint runs inside the COMMIT that takes the log
// past 1,000 pages, so one write in a few hundred paid for copying all
// the others' pages and for an fsync of the database file: the tail of the
// ingest latency. The writer therefore sets wal_autocheckpoint=0 and a
// background checkpointer (checkpoint.go), started by Open and stopped by
// Close, checkpoints from a connection of its own (busy_timeout 0, the
// writer's synchronous setting):
//
//   - every 20ms it reads the wal-index header (the first 136 bytes of the
//     -shm file, whose layout is part of SQLite's file format): how many
//     frames the log holds and how many are already copied;
//   - once Options.CheckpointPages (default 1000) are still to be copied,
//     it runs a PASSIVE checkpoint, which neither waits for nor blocks the
//     writer or the readers;
//   - once the log has seen no write for Options.CheckpointIdle (default
//     1s) it copies what is left with a PASSIVE checkpoint and, if the log
//     file is longer than its limit (ten times CheckpointPages pages, 40
//     MB; after a burst or a bulk load), runs a TRUNCATE checkpoint, which
//     empties it; when a reader is in the way it gives up at once and
//     tries again after another idle period.
//
// A log file within the limit is kept: after a checkpoint SQLite writes
// the log from its start again, overwriting the file in place, and on this
// machine's ext4 an fsync that also grows the file is slower (a 32 KiB
// fdatasync took p50 0.11-0.15ms and p99 1.3-1.9ms overwriting, 0.2-0.3ms
// and 3.6-4.0ms growing the file), so emptying the file whenever the
// store is idle would slow the next 40 MB of commits. The writer's
// journal_size_limit is the same limit: SQLite cuts a longer file back
// when the log restarts.
//
// SQLite starts the log over from its beginning only when a write
// transaction begins with every frame copied, which a checkpointer working
// beside a busy writer never sees. So that the log does not grow for as
// long as writes keep coming, the writer itself runs a PASSIVE checkpoint
// before its next transaction once the log holds ten times
// CheckpointPages (40 MB) with frames still to copy; its next transaction
// then restarts the log. Past that bound the checkpointer copies the log
// at each poll, and the writer waits until an eighth of CheckpointPages
// or less is left to copy (or the log reaches twice the bound, or the
// checkpointer has stopped), since every write waits while the writer
// checkpoints. That puts one small checkpoint on the commit path per 40
// MB of log instead of a full one per 4 MB. A negative
// CheckpointPages restores SQLite's automatic checkpoints, for comparison.
//
// SQLite syncs the database file only at the end of a checkpoint that
// copies the whole log, so the pages the checkpointer copies while the
// writer goes on writing wait in the page cache for the writer's small
// checkpoint, whose sync would write them all. While the writer's
// checkpoints hold more than one write, the checkpointer therefore starts
// writing them to the disk after each of its copies (sync_file_range,
// which neither waits nor makes anything durable; writeBack), and the
// writer's sync finds only the pages copied since.
//
// BenchmarkAppendToLargeStore appends single messages with three jobs to
// random users of a 200,000-message store (-benchtime=2000x, on the shared
// 2 vCPU machine). With the background checkpointer 0.3-0.55% of
// acknowledgements took 5ms or more and the 99th percentile was
// 2.2-2.6ms; with checkpoints inside commits 2.9% and 8.9-9.7ms (two runs
// each, load 1.0). Under load 2.0-3.2 (seven runs each): 1.4-2.4% and
// 6.0-9.3ms against 3.3-3.7% and 10.2-14.2ms.
//
// # Writer settings
//
// Besides busy_timeout, foreign_keys, journal_mode=WAL, synchronous and
// the checkpoint settings above, the writer keeps temporary data in memory
// (temp_store=MEMORY): every request of a group commit runs in a
// savepoint, which journals each page it changes, and SQLite spills such a
// journal past 64 KiB to a temporary file, a pwrite per page (a tenth of
// an append's CPU before the change). The statements of AppendMessages
// and WriteMemories are prepared once, at Open (preparedWrites in
// commit.go), since parsing them cost more than running most of them.
//
// # Durability
//
// The writer runs with synchronous=FULL by default: every COMMIT fsyncs the
// write-ahead log before AppendMessages returns. A process killed with
// SIGKILL right after an acknowledged write loses nothing under NORMAL
// either, since a committed WAL frame is in the operating system's page
// cache by then (TestSIGKILLKeepsAcknowledgedWrites kills a writer and
// checks); FULL also keeps the write through a power loss or kernel crash,
// where NORMAL may roll back the last transactions. On the development
// machine (a shared 2 vCPU VM, go test -bench) one message with one job
// took a median of 1.6-1.8ms to acknowledge with FULL against 0.9ms with
// NORMAL, and a whole turn 1.6-1.8ms against 0.9ms; the 99th percentile was
// 9-22ms in both modes (WAL checkpoints inside commits, which the
// background checkpointer has since moved off the commit path, and the
// busy machine). The ~0.8ms
// of an fsync is far below a language model's latency, so FULL is the
// default and NORMAL an option (Options.Synchronous).
//
// The writes of background jobs (a batch's memories, preferences and
// events, the backlog's bookkeeping, River's own fetches and completions)
// commit at NORMAL whatever the setting, in group commits of their own:
// nobody waits on them, they derive from data already committed, and the
// log's commits survive a power loss as a prefix, so what a power loss
// takes of them it takes with the jobs' completion, and the jobs run
// again (durability.go). Each commit that somebody waits on syncs them
// too.
//
// At FULL or EXTRA, the group commits somebody waits on (appends, turns,
// API writes) do not fsync inside their COMMIT either: they commit at
// NORMAL, and each caller returns once an fsync of the log that began
// after the commit has ended, run by the first caller that finds none
// running (logsync.go). The guarantee is FULL's, but the one writer goes
// on to the next batch while the disk syncs, and the commits that end
// during one fsync share the next. A reader may see such a write before its caller hears that it is
// kept. Transactions of their own (writeTx: migrations, imports) still
// fsync in their COMMIT.
//
// # Tables
//
// Migrations are SQL files embedded from migrations/, named NNNN_what.sql,
// applied in numeric order at Open, each in its own transaction, and
// recorded in schema_migrations (version, name, applied_at); reopening
// applies nothing twice. A new feature adds the next numbered file. River's
// own migrations (river_job, river_leader, river_queue, ...) run after them
// through rivermigrate.
//
// The schema of 0001_init.sql:
//
//	tenants      id; a "default" row always exists
//	users        (tenant_id, id), created_at
//	threads      (tenant_id, user_id, id), created_at, updated_at,
//	             last_seq, context (ActiveContext JSON), last_shown (JSON)
//	messages     pk, (tenant_id, user_id, id) unique, thread_id,
//	             seq (per thread, from 1), role, text, at, created_at
//	messages_fts FTS5 over messages.text (external content, porter
//	             stemming), kept in sync by triggers; dropped by 0016,
//	             message_search (0002) indexes the same text
//	summaries    id, (tenant_id, user_id, thread_id), text, from_seq,
//	             to_seq, sources (JSON), created_at
//	events       pk, (tenant_id, user_id, id) unique, type, title_id,
//	             value (NULL unless rated or abandoned), at, created_at
//	titles       id, title, type, year, end_year, genres (JSON),
//	             cast_members (JSON), overview, runtime_minutes, is_adult,
//	             href; shared by all tenants
//
// Later migrations document themselves at their top: 0002 attribute
// memory (memories, their full-text index and vectors, runs, graph
// checkpoints), 0003 profiles and snapshots, 0004 preference vectors, and
// 0005 recall_changes, the change log that recall's warm index
// (recall.Index) reads through RecallDocs: triggers on memories, messages,
// their vectors and rejected runs append the changed row's key, and
// PruneRecallChanges deletes old rows and raises recall_change_floor, so a
// reader whose position is below the floor reads the user in full.
//
// Every per-user table references its user (directly or through threads)
// with ON DELETE CASCADE, so deleting the user row deletes everything the
// user owns; the FTS triggers fire for cascaded deletes too. Client-given
// message and event ids are unique per (tenant, user), which makes repeated
// writes idempotent: a known id is skipped and gets no jobs.
//
// Timestamps are INTEGER nanoseconds since the Unix epoch in UTC, in every
// table of this package (River's tables keep River's own text format). An
// empty tenant in a memento.Scope means memento.DefaultTenant; tenants are
// created on their first write.
//
// # Tests
//
// Package sqlitetest opens a fresh store in a test's temporary directory
// for the tests of any package.
package sqlite
