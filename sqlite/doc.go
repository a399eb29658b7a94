// Package sqlite is Memento's embedded store: users, threads, messages,
// summaries, events, catalog titles and the background job queue, all in
// one SQLite file, through the pure-Go driver modernc.org/sqlite (no cgo).
// *DB implements memento.UserService, MessageLog, ThreadService,
// EventService, TitleService, Queue and Pinger.
//
// # How data flows
//
// A write (AppendMessages, SaveTurn, AddEvents, ...) validates its input,
// then runs one transaction on the writer connection: it creates the tenant,
// user and thread rows as needed, inserts the rows, and inserts the
// background jobs for the new rows into River's river_job table with
// River's InsertManyTx on the same *sql.Tx. The call returns only after
// COMMIT, so a message and its jobs are durable together or not at all.
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
// that has one.
//
// Reads (ThreadState, Messages, Events, SearchMessages, Jobs, ...) go to a
// separate pool of read-only connections and never wait for the writer.
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
// foreign_keys=ON; the writer sets journal_mode=WAL.
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
// 9-22ms in both modes (WAL checkpoints and the busy machine). The ~0.8ms
// of an fsync is far below a language model's latency, so FULL is the
// default and NORMAL an option (Options.Synchronous).
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
//	             stemming), kept in sync by triggers
//	summaries    id, (tenant_id, user_id, thread_id), text, from_seq,
//	             to_seq, sources (JSON), created_at
//	events       pk, (tenant_id, user_id, id) unique, type, title_id,
//	             value (NULL unless rated or abandoned), at, created_at
//	titles       id, title, type, year, end_year, genres (JSON),
//	             cast_members (JSON), overview, runtime_minutes, is_adult,
//	             href; shared by all tenants
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
