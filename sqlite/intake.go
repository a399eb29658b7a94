package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
	"github.com/memento-ai/memento/internal/keylock"
)

// The intake: acknowledgements off the store's writer.
//
// An append used to be acknowledged once its transaction on the store's
// one writer committed, and that writer is also the one every background
// job writes through: at 500 messages a second it was busy 80-98 % of the
// time, and an append waited for the write it was running (a batch of
// memories, a merge of the full-text index, a checkpoint), 33-69 ms at
// the 99th percentile (docs/BENCHMARKS.md, eighth to tenth sessions).
//
// So an append is written to a second SQLite file beside the store, the
// intake (the store's path with "-intake"), which has a writer of its own
// that nothing else uses, with its own group commit, and it is
// acknowledged once that commit is on disk. A mover takes the intake's
// rows in order and writes them to the store as the append used to (the
// user and thread if new, the messages, their jobs), in one transaction
// per batch that waits for the disk, then deletes them from the intake.
// A crash between the two leaves rows that the mover writes again at the
// next Open; a message whose id the store holds is skipped with its
// jobs, so nothing is written twice.
//
// What an acknowledgement promised stays true for readers: every read of
// a user's data first waits until the rows of that user acknowledged
// before it began have reached the store (settle), which takes the
// mover's next batch, a few milliseconds, while the store keeps up. The
// append assigns the messages' sequence numbers and finds repeated ids
// itself, so it answers exactly what the store will hold: a thread's
// appends and turns take the thread's lock (lockThread) from reading its
// newest sequence number (the intake's, else the store's) until their
// write is durable, and a turn first waits for the thread's rows in the
// intake to reach the store. Only another process writing the same
// thread of the same file at that moment (an import run beside a
// server) can make the mover renumber a message after the one it
// finds; it logs when it does.

// intakePoll is how often the mover looks for rows that no append of
// its process told it about (another process's).
const intakePoll = 20 * time.Millisecond

// intakeBatch bounds the rows the mover writes to the store in one
// request of the store's group commit.
const intakeBatch = 128

// intakeSchema is the intake file's one table: each row an acknowledged
// message with the jobs to enqueue with it.
const intakeSchema = `CREATE TABLE IF NOT EXISTS intake (
	row INTEGER PRIMARY KEY AUTOINCREMENT,
	tenant_id TEXT NOT NULL,
	user_id TEXT NOT NULL,
	thread_id TEXT NOT NULL,
	id TEXT NOT NULL,
	seq INTEGER NOT NULL,
	role TEXT NOT NULL,
	text TEXT NOT NULL,
	at INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	emotion TEXT,
	emotion_confidence REAL,
	jobs TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS intake_id ON intake (tenant_id, user_id, id);
CREATE INDEX IF NOT EXISTS intake_thread ON intake (tenant_id, user_id, thread_id, seq);
CREATE TABLE IF NOT EXISTS intake_state (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	moved INTEGER NOT NULL
);
INSERT INTO intake_state (id, moved) VALUES (1, 0) ON CONFLICT DO NOTHING;`

// threadKey names a thread across tenants and users.
type threadKey struct {
	scope  memento.Scope
	thread string
}

// intakeJob is the stored form of a memento.JobRequest.
type intakeJob struct {
	Kind        string          `json:"kind"`
	Payload     json.RawMessage `json:"payload"`
	MaxAttempts int             `json:"maxAttempts,omitempty"`
	ByUser      bool            `json:"byUser,omitempty"`
	Coalesce    bool            `json:"coalesce,omitempty"`
}

// intake is the store's intake file, its writer and its mover.
type intake struct {
	db   *DB
	path string
	// owner is the lock of the process that moves the intake's rows,
	// held while it is open; nil in another process, which appends to
	// the intake, waits for the owner's mover (intake_state.moved) and
	// tries to take the lock over every intakeContend (contend).
	owner atomic.Pointer[processLock]
	// users is this process's shared lock on the intake's users' file,
	// held while the intake is open (intakeplace.go); nil for an intake
	// opened only to move what it holds.
	users   *fileLock
	write   *sql.DB
	read    *sql.DB
	commits *committer
	// levels are the writer's synchronous settings; logSync, unless the
	// configured level is NORMAL, syncs the log after the commits
	// instead of the commits themselves, so that the next batch is
	// written while the last one syncs (logsync.go).
	levels  *syncLevels
	logSync *logSyncer
	// deleted is the newest row the intake has deleted (or is deleting)
	// after it reached the store.
	deleted atomic.Int64

	// locks are the locks of the threads an append or a turn holds or
	// waits for.
	locks keylock.Map[threadKey]

	mu sync.Mutex
	// moved is the newest row the store holds, with every row before
	// it; movedCh is closed when it moves on (and replaced).
	moved   int64
	movedCh chan struct{}
	// failing is the mover's last error, nil once a batch went through.
	failing error

	wake      chan struct{}
	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
	// contendStop ends contend; contendDone is closed when it has.
	contendStop, contendDone chan struct{}

	// forget is the newest row the store holds, for the forgetter to
	// delete from the intake once the store's log is on disk.
	forget     atomic.Int64
	forgetWake chan struct{}
	forgetStop chan struct{}
	forgetDone chan struct{}
}

// openIntake opens (creating) the store's intake file at the place r
// records, stamped with r's token if it has one (intakeplace.go).
// One process at a time moves its rows to the store: the one that holds
// the lock on a file beside it (flock(2)). It starts the mover, which
// first writes to the store what a previous process left. Another process
// on the same store appends to the intake too, reads the owner's
// progress from the file and takes the intake over once the owner has
// stopped (contend); where no lock can be had at all (a platform without
// flock), there is no intake and appends go to the store.
func openIntake(ctx context.Context, db *DB, r intakeRecord) (*intake, error) {
	owner, err := lockProcess(db.path + "-intake.lock")
	if err != nil && probeProcess(db.path+"-intake.lock") == lockUnknown {
		db.logger.Info("intake: no lock to decide which process moves it; appends go to the store directly", "err", err)
		return nil, nil
	}
	in := &intake{db: db, path: r.path, levels: newSyncLevels(db.opts.Synchronous, false),
		movedCh: make(chan struct{}),
		wake:    make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{}),
		forgetWake: make(chan struct{}, 1), forgetStop: make(chan struct{}), forgetDone: make(chan struct{}),
		contendStop: make(chan struct{}), contendDone: make(chan struct{})}
	fail := func(err error) (*intake, error) {
		in.close()
		return nil, fmt.Errorf("open the intake %s: %w", in.path, err)
	}
	if in.write, err = openCached(in.dsn(true), &db.kept); err != nil {
		return fail(err)
	}
	in.write.SetMaxOpenConns(1)
	in.write.SetMaxIdleConns(1)
	in.write.SetConnMaxLifetime(0)
	in.write.SetConnMaxIdleTime(0)
	if _, err := in.write.ExecContext(ctx, intakeSchema); err != nil {
		return fail(err)
	}
	if r.token != "" {
		if err := in.stamp(ctx, r.token); err != nil {
			return fail(err)
		}
	}
	if in.read, err = openCached(in.dsn(false), &db.kept); err != nil {
		return fail(err)
	}
	in.read.SetMaxOpenConns(2)
	if in.levels.switches() {
		in.logSync = newLogSyncer(in.path)
	}
	in.commits = newCommitter(in.pin, nil, in.logSync, openLogPages(in.path))
	if owner == nil {
		go in.contend()
		return in, nil
	}
	close(in.contendDone) // nothing to contend for
	if err := in.takeOver(ctx, owner); err != nil {
		owner.release()
		return fail(err)
	}
	return in, nil
}

// intakeContend is how often a process that does not move the intake
// tries to take it over, so that the rows it appends keep moving once the
// process that moved them has stopped.
const intakeContend = 500 * time.Millisecond

// contend tries to take the intake's lock every intakeContend until it
// has it or the intake closes.
func (in *intake) contend() {
	defer close(in.contendDone)
	tick := time.NewTicker(intakeContend)
	defer tick.Stop()
	for {
		select {
		case <-in.contendStop:
			return
		case <-tick.C:
		}
		owner, err := lockProcess(in.db.path + "-intake.lock")
		if err != nil {
			continue
		}
		if err := in.takeOver(context.Background(), owner); err != nil {
			owner.release()
			in.db.logger.Error("intake: could not take over moving it", "err", err)
			continue
		}
		in.db.logger.Info("intake: this process moves it now", "path", in.path)
		return
	}
}

// takeOver makes this process the one that moves the intake's rows, with
// owner its lock: what is in the intake past the recorded progress is
// moved first (again, if a process died before it could record or delete
// it), and reads wait for it like for any other.
func (in *intake) takeOver(ctx context.Context, owner *processLock) error {
	var first sql.NullInt64
	var left int
	if err := in.read.QueryRowContext(ctx, `SELECT min(row), count(*) FROM intake`).Scan(&first, &left); err != nil {
		return err
	}
	moved := int64(0)
	if first.Valid {
		moved = first.Int64 - 1
		in.db.logger.Info("intake: acknowledged messages not yet in the store or not yet forgotten, moving them", "messages", left, "path", in.path)
	} else {
		// Rows are numbered on from the highest ever used (AUTOINCREMENT).
		var seq sql.NullInt64
		if err := in.read.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'intake'`).Scan(&seq); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		moved = seq.Int64
	}
	if _, err := in.write.ExecContext(ctx, `UPDATE intake_state SET moved = max(moved, ?)`, moved); err != nil {
		return err
	}
	in.mu.Lock()
	in.moved = moved
	in.mu.Unlock()
	in.owner.Store(owner)
	go in.run()
	go in.forgetter()
	in.nudge()
	return nil
}

// owns reports whether this process moves the intake.
func (in *intake) owns() bool { return in.owner.Load() != nil }

// drainIntake moves to the store what an earlier run with the intake
// left in it, for a store opened without it: those messages were
// acknowledged. A file that is not there, or an intake another process
// moves, needs nothing.
func (db *DB) drainIntake(ctx context.Context) error {
	r, err := db.recordedIntake()
	if err != nil {
		return err
	}
	_, err = db.drainIntakeAt(ctx, r)
	return err
}

// drainIntakeAt moves to the store what the intake r records holds, if
// this process can move it (owns: false when another process does).
func (db *DB) drainIntakeAt(ctx context.Context, r intakeRecord) (owns bool, err error) {
	if _, err := os.Stat(r.path); errors.Is(err, os.ErrNotExist) {
		db.warnIfIntakeLost(r)
		return true, nil
	}
	in, err := openIntake(ctx, db, r)
	if err != nil || in == nil || !in.owns() {
		if in != nil {
			in.close()
		}
		return false, err
	}
	return true, in.drain(ctx)
}

// drain moves what the intake holds to the store, and closes it.
func (in *intake) drain(ctx context.Context) error {
	db := in.db
	defer in.close()
	left, err := in.lag(ctx)
	if err != nil {
		return err
	}
	if left.Waiting == 0 {
		return nil
	}
	if err := in.settleAll(ctx); err != nil {
		return fmt.Errorf("move the %d messages left in the intake %s: %w", left.Waiting, in.path, err)
	}
	db.logger.Info("intake: moved the messages an earlier run left in it", "messages", left.Waiting, "path", in.path)
	return nil
}

// stamp marks the intake as the store's whose token is token, unless it
// is marked already; an intake marked with another token is refused.
func (in *intake) stamp(ctx context.Context, token string) error {
	if _, err := in.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS intake_store (
			id INTEGER PRIMARY KEY CHECK (id = 1),
			token TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("stamp the intake with its store: %w", err)
	}
	if _, err := in.write.ExecContext(ctx, `INSERT INTO intake_store (id, token) VALUES (1, ?) ON CONFLICT DO NOTHING`, token); err != nil {
		return fmt.Errorf("stamp the intake with its store: %w", err)
	}
	var got string
	if err := in.write.QueryRowContext(ctx, `SELECT token FROM intake_store`).Scan(&got); err != nil {
		return fmt.Errorf("read the intake's store: %w", err)
	}
	if got != token {
		return memento.Errorf(memento.ECONFLICT, "the intake file %s belongs to another store; give this store a place of its own", in.path)
	}
	return nil
}

// driverName is the database/sql name of modernc.org/sqlite.
const driverName = "sqlite"

// dsn returns the data source name of the intake's writer or reader.
func (in *intake) dsn(writer bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(in.db.opts.BusyTimeout.Milliseconds(), 10)+")")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous("+in.levels.lazy+")")
		q.Set("_txlock", "immediate")
	} else {
		q.Set("mode", "ro")
	}
	return "file:" + (&url.URL{Path: in.path}).EscapedPath() + "?" + q.Encode()
}

// pin takes the intake's writer for a batch of its group commit, which is
// always waited on: at the lazy level, made durable by the log syncer
// after the commit, or at the configured level when nothing switches.
func (in *intake) pin(ctx context.Context, _ bool) (*pinnedWriter, error) {
	conn, err := in.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &pinnedWriter{conn: conn, levels: in.levels, durable: true, deferred: in.logSync != nil}, nil
}

// close stops the mover once it has moved what it can within a few
// seconds (the rest waits in the file for the next Open), then the
// intake's writer, and closes the intake. Appends sent after it fail with
// EUNAVAILABLE. The store's committer must still run.
func (in *intake) close() {
	in.closeOnce.Do(func() {
		if in.commits != nil {
			close(in.contendStop)
			<-in.contendDone
		}
		if in.owns() {
			close(in.stop)
			<-in.stopped
			close(in.forgetStop)
			<-in.forgetDone
		}
		if in.commits != nil {
			in.commits.close()
		}
		if in.logSync != nil {
			in.logSync.close()
		}
		if in.read != nil {
			in.read.Close()
		}
		if in.write != nil {
			in.write.Close()
		}
		if in.commits != nil {
			in.commits.closeFiles() // after the connections (walCheckpointer.closeFiles)
		}
		if owner := in.owner.Load(); owner != nil {
			owner.release()
		}
		in.users.unlock()
	})
}

// lockThread takes the lock of a thread's sequence numbers and returns
// the function that releases it.
func (in *intake) lockThread(s memento.Scope, thread string) func() {
	return in.locks.Lock(threadKey{s, thread})
}

// nudge wakes the mover.
func (in *intake) nudge() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// settle waits until every row of the user acknowledged before the call
// is in the store, or ctx ends. A nil intake has nothing to wait for, nor
// has a background job: its message reached the store before the job was
// enqueued, with every earlier one, and waiting for the user's later
// messages would only hold up the queue while the user chats.
func (in *intake) settle(ctx context.Context, s memento.Scope) error {
	if in == nil || jobctx.Is(ctx) {
		return nil
	}
	var last int64
	err := in.read.QueryRowContext(ctx, `SELECT coalesce(max(row), 0) FROM intake WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User).Scan(&last)
	if err != nil {
		return fmt.Errorf("read the intake: %w", err)
	}
	return in.waitMoved(ctx, last)
}

// settleAll is settle for every user.
func (in *intake) settleAll(ctx context.Context) error {
	if in == nil {
		return nil
	}
	var last int64
	err := in.read.QueryRowContext(ctx, `SELECT coalesce(max(row), 0) FROM intake`).Scan(&last)
	if err != nil {
		return fmt.Errorf("read the intake: %w", err)
	}
	return in.waitMoved(ctx, last)
}

// waitMoved waits until the store holds every row up to row: in the
// owner, until its mover has moved them; in another process, until the
// owner has recorded that it did (intake_state), polling the file.
func (in *intake) waitMoved(ctx context.Context, row int64) error {
	if row == 0 {
		return nil
	}
	for {
		var moved int64
		var ch <-chan struct{}
		var poll <-chan time.Time
		var failing error
		if in.owns() {
			in.mu.Lock()
			moved, ch, failing = in.moved, in.movedCh, in.failing
			in.mu.Unlock()
		} else {
			var err error
			if moved, err = in.movedUpTo(ctx); err != nil {
				return err
			}
			poll = time.After(2 * time.Millisecond)
		}
		if row <= moved {
			return nil
		}
		in.nudge()
		select {
		case <-ch:
		case <-poll:
		case <-ctx.Done():
			if failing != nil {
				return memento.WrapError(memento.EUNAVAILABLE, failing, "Acknowledged messages could not be written to the store yet.")
			}
			return fmt.Errorf("wait for acknowledged messages to reach the store: %w", ctx.Err())
		}
	}
}

// movedUpTo returns the newest row the store holds with every one before
// it: the mover's, or in another process the one it recorded.
func (in *intake) movedUpTo(ctx context.Context) (int64, error) {
	if in.owns() {
		in.mu.Lock()
		defer in.mu.Unlock()
		return in.moved, nil
	}
	var moved int64
	if err := in.read.QueryRowContext(ctx, `SELECT moved FROM intake_state`).Scan(&moved); err != nil {
		return 0, fmt.Errorf("read the intake: %w", err)
	}
	return moved, nil
}

// lastSeq returns the thread's newest sequence number in the store. The
// caller holds the thread's lock; the intake's rows of the thread are
// counted in the append's transaction.
func (in *intake) lastSeq(ctx context.Context, s memento.Scope, thread string) (int64, error) {
	var seq int64
	err := in.db.read.QueryRowContext(ctx, sqlThreadSeq, s.Tenant, s.User, thread).Scan(&seq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read thread: %w", err)
	}
	return seq, nil
}

// append stores msgs in the intake and returns once they are durable
// there, as DB.AppendMessages promises.
func (in *intake) append(ctx context.Context, s memento.Scope, thread string, msgs []memento.Message, jobsFor func(memento.Message) []memento.JobRequest) (*memento.AppendResult, error) {
	if in.commits.isClosed() {
		return nil, errClosed
	}
	unlock := in.lockThread(s, thread)
	defer unlock()
	// The thread's newest number and the ids given are read from the
	// store before the intake's write, so that its batch does not wait
	// for the store's readers: rows up to moved were in the store when
	// it was read, and the write reads the store again if the intake
	// deleted rows after moved meanwhile (moved to the store after this
	// read, and no longer in the intake; stored).
	moved := int64(-1) // not the owner: another process deletes
	if in.owns() {
		in.mu.Lock()
		moved = in.moved
		in.mu.Unlock()
	}
	base, err := in.lastSeq(ctx, s, thread)
	if err != nil {
		return nil, err
	}
	inStore := map[string]memento.Message{}
	for _, m := range msgs {
		if m.ID == "" {
			continue
		}
		old, err := scanMessage(in.db.read.QueryRowContext(ctx, sqlMessageByID, s.Tenant, s.User, m.ID))
		if err == nil {
			inStore[m.ID] = old
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("look up message %s: %w", m.ID, err)
		}
	}
	now := in.db.now()
	res := &memento.AppendResult{}
	write := func(ctx context.Context, tx *sql.Tx) error {
		res.Messages, res.Inserted, res.Duplicates = make([]memento.Message, 0, len(msgs)), 0, 0
		// The thread's newest number: the store's, or one of its rows
		// in the intake (appended by any process: this transaction
		// holds the intake's lock).
		var queued sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(seq) FROM intake WHERE tenant_id = ? AND user_id = ? AND thread_id = ?`,
			s.Tenant, s.User, thread).Scan(&queued); err != nil {
			return fmt.Errorf("read the intake: %w", err)
		}
		seq := max(base, queued.Int64)
		if in.stale(moved) {
			again, err := in.lastSeq(ctx, s, thread)
			if err != nil {
				return err
			}
			seq = max(seq, again)
		}
		byID := map[string]int{}
		for _, m := range msgs {
			if m.ID != "" {
				old, found, err := in.stored(ctx, tx, s, m.ID, res.Messages, byID, inStore, moved)
				if err != nil {
					return err
				}
				if found {
					if err := checkRepeat(m, old, thread); err != nil {
						return err
					}
					res.Messages = append(res.Messages, old)
					res.Duplicates++
					continue
				}
			}
			seq++
			m = newMessage(m, s, thread, seq, now)
			var jobs []intakeJob
			if jobsFor != nil {
				for _, r := range jobsFor(m) {
					payload, err := json.Marshal(r.Payload)
					if err != nil {
						return fmt.Errorf("enqueue %s job: encode payload: %w", r.Kind, err)
					}
					// Attempts as this process's handler of the kind
					// says: another process may move the row.
					jobs = append(jobs, intakeJob{Kind: r.Kind, Payload: payload, MaxAttempts: in.db.maxAttempts(r), ByUser: r.ByUser, Coalesce: r.Coalesce})
				}
			}
			jobsJSON, err := json.Marshal(jobs)
			if err != nil {
				return fmt.Errorf("encode jobs: %w", err)
			}
			label, confidence := emotionColumns(m.Emotion)
			_, err = tx.ExecContext(ctx, `INSERT INTO intake (tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, emotion, emotion_confidence, jobs)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				m.Tenant, m.User, m.Thread, m.ID, m.Seq, string(m.Role), m.Text, nanos(m.At), nanos(m.CreatedAt), label, confidence, string(jobsJSON))
			if err != nil {
				return fmt.Errorf("insert message %s: %w", m.ID, err)
			}
			byID[m.ID] = len(res.Messages)
			res.Messages = append(res.Messages, m)
			res.Inserted++
		}
		return nil
	}
	foreground(ctx)
	req := &commitRequest{ctx: ctx, fn: write, done: make(chan error, 1), times: memento.WriteTimesFrom(ctx)}
	if req.times != nil {
		req.sent, req.split = time.Now(), memento.WaitSplitFrom(ctx)
	}
	if _, err := in.commits.submit(ctx, prioUrgent, req); err != nil {
		return nil, err
	}
	answered := time.Now()
	if res.Inserted > 0 {
		in.nudge()
	}
	if req.syncAfter != 0 {
		if err := in.logSync.wait(req.syncAfter); err != nil {
			return nil, err
		}
	}
	if req.times != nil {
		recordWriteTimes(req, answered, time.Now())
	}
	return res, nil
}

// stored finds the message id of the user: one of this call (stored,
// byID), one in the intake, or one in the store (inStore, read when the
// intake had moved the rows up to moved). The intake is read in the
// write's transaction, which the intake's deletions run in turn with, so
// a message found in neither was nowhere, unless the intake has deleted
// rows past moved since: one of them may have reached the store after it
// was read, and the store is read again.
func (in *intake) stored(ctx context.Context, tx *sql.Tx, s memento.Scope, id string, stored []memento.Message, byID map[string]int, inStore map[string]memento.Message, moved int64) (memento.Message, bool, error) {
	if i, ok := byID[id]; ok {
		return stored[i], true, nil
	}
	if m, ok := inStore[id]; ok {
		return m, true, nil
	}
	m, err := scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM intake WHERE tenant_id = ? AND user_id = ? AND id = ?`, s.Tenant, s.User, id))
	if err == nil {
		return m, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return m, false, fmt.Errorf("look up message %s: %w", id, err)
	}
	if !in.stale(moved) {
		return m, false, nil
	}
	m, err = scanMessage(in.db.read.QueryRowContext(ctx, sqlMessageByID, s.Tenant, s.User, id))
	if err == nil {
		return m, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return m, false, fmt.Errorf("look up message %s: %w", id, err)
	}
	return m, false, nil
}

// stale reports, in the intake's write transaction, whether what an
// append read from the store when the mover had moved the rows up to
// moved may miss rows the intake no longer holds: it deleted rows past
// moved since, or another process may have (this one did not move the
// intake when it read: moved < 0).
func (in *intake) stale(moved int64) bool {
	return moved < 0 || in.deleted.Load() > moved
}

// intakeRow is a row of the intake as the mover reads it.
type intakeRow struct {
	row  int64
	msg  memento.Message
	jobs []intakeJob
}

// run moves rows to the store whenever it is woken, until close; then it
// moves what is left, for a few seconds at most.
func (in *intake) run() {
	defer close(in.stopped)
	// The mover's writes are background work: they do not count as a
	// request being served.
	ctx, cancel := context.WithCancel(memento.InBackground(context.Background()))
	defer cancel()
	// The rows other processes append wake nobody here: the mover also
	// looks every intakePoll.
	tick := time.NewTicker(intakePoll)
	defer tick.Stop()
	backoff := 10 * time.Millisecond
	for {
		select {
		case <-in.wake:
		case <-tick.C:
		case <-in.stop:
			ctx, cancel := context.WithTimeout(memento.InBackground(context.Background()), 5*time.Second)
			defer cancel()
			for ctx.Err() == nil {
				if n, err := in.move(ctx); err != nil || n == 0 {
					if err != nil {
						in.db.logger.Warn("intake: messages left for the next open", "err", err)
					}
					return
				}
			}
			return
		}
		for {
			n, err := in.move(ctx)
			if err != nil {
				in.mu.Lock()
				in.failing = err
				in.mu.Unlock()
				in.db.logger.Error("intake: moving acknowledged messages to the store failed; retrying", "err", err, "retryIn", backoff)
				select {
				case <-time.After(backoff):
				case <-in.stop:
				}
				backoff = min(2*backoff, 5*time.Second)
				in.nudge()
				break
			}
			backoff = 10 * time.Millisecond
			if n == 0 {
				break
			}
		}
	}
}

// move writes the oldest rows not yet moved to the store, in one request
// of its group commit that does not wait for the disk, records its
// progress and hands the rows to the forgetter. It returns how many rows
// it moved.
func (in *intake) move(ctx context.Context) (int, error) {
	in.mu.Lock()
	after := in.moved
	in.mu.Unlock()
	rows, err := in.read.QueryContext(ctx, `SELECT `+messageColumns+`, row, jobs FROM intake WHERE row > ? ORDER BY row LIMIT ?`, after, intakeBatch)
	if err != nil {
		return 0, fmt.Errorf("read the intake: %w", err)
	}
	var batch []intakeRow
	for rows.Next() {
		var r intakeRow
		var jobs string
		m, err := scanMessage(rows, &r.row, &jobs)
		if err != nil {
			rows.Close()
			return 0, fmt.Errorf("read the intake: %w", err)
		}
		if err := json.Unmarshal([]byte(jobs), &r.jobs); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read the intake: the jobs of message %s: %w", m.ID, err)
		}
		r.msg = m
		batch = append(batch, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read the intake: %w", err)
	}
	if len(batch) == 0 {
		return 0, nil
	}
	// Committed without waiting for the disk, as a job's write: the
	// rows are on disk in the intake, which forgets them only once the
	// store's log is synced after this commit (forgetter). Readers may
	// read them from now on.
	if err := in.db.lazyTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return in.db.writeIntake(ctx, tx, batch)
	}); err != nil {
		return 0, fmt.Errorf("write %d acknowledged messages to the store: %w", len(batch), err)
	}
	top := batch[len(batch)-1].row
	in.forget.Store(top)
	select {
	case in.forgetWake <- struct{}{}:
	default:
	}
	// For the other processes on the store, which wait for it to read.
	in.commits.post(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE intake_state SET moved = max(moved, ?)`, top)
		return err
	})
	in.mu.Lock()
	in.moved = top
	in.failing = nil
	close(in.movedCh)
	in.movedCh = make(chan struct{})
	in.mu.Unlock()
	return len(batch), nil
}

// forgetter deletes from the intake the rows the store holds, once a sync
// of the store's log after their commit has ended: until then a power
// loss could take them from the store, and the next Open writes them
// again from the intake. A deletion lost, or not made before Close, only
// makes the next Open find them in the store and skip them. On close it
// forgets what the mover moved last.
func (in *intake) forgetter() {
	defer close(in.forgetDone)
	for {
		stopping := false
		select {
		case <-in.forgetWake:
		case <-in.forgetStop:
			stopping = true
		}
		top := in.forget.Load()
		if top > in.deleted.Load() {
			if ls := in.db.logSync; ls != nil {
				if err := ls.wait(ls.commit()); err != nil {
					in.db.logger.Error("intake: the store's log could not be synced; its rows stay in the intake", "err", err)
					top = 0
				}
			}
		}
		if top > in.deleted.Load() {
			in.commits.post(func(ctx context.Context, tx *sql.Tx) error {
				// Before the rows go: an append's look-up in the
				// same transaction then knows to read the store
				// again (stored).
				in.deleted.Store(max(in.deleted.Load(), top))
				_, err := tx.ExecContext(ctx, `DELETE FROM intake WHERE row <= ?`, top)
				return err
			})
		}
		if stopping {
			return
		}
	}
}

// lag reads how many acknowledged messages wait in the intake and when
// the oldest of them was acknowledged.
func (in *intake) lag(ctx context.Context) (memento.QueueLag, error) {
	l := memento.QueueLag{Kind: IntakeKind}
	after, err := in.movedUpTo(ctx)
	if err != nil {
		return l, err
	}
	var oldest sql.NullInt64
	if err := in.read.QueryRowContext(ctx, `SELECT count(*), min(created_at) FROM intake WHERE row > ?`, after).Scan(&l.Waiting, &oldest); err != nil {
		return l, fmt.Errorf("read the intake's lag: %w", err)
	}
	if oldest.Valid {
		l.Oldest = fromNanos(oldest.Int64)
	}
	return l, nil
}

// changedUsers adds to out the users with messages in the intake, not yet
// moved, acknowledged after since (nanoseconds), each at the time of the
// newest unless out has a later one.
func (in *intake) changedUsers(ctx context.Context, since int64, out map[memento.Scope]time.Time) error {
	after, err := in.movedUpTo(ctx)
	if err != nil {
		return err
	}
	rows, err := in.read.QueryContext(ctx, `SELECT tenant_id, user_id, max(created_at) FROM intake
		WHERE row > ? AND created_at > ? GROUP BY tenant_id, user_id`, after, since)
	if err != nil {
		return fmt.Errorf("read the intake's users: %w", err)
	}
	if err := scanChangedUsers(rows, out); err != nil {
		return fmt.Errorf("read the intake's users: %w", err)
	}
	return nil
}

// IntakeKind names, among the queue's lags and unfinished work, the
// acknowledged messages still in the intake: not yet in the store, so
// without their jobs.
const IntakeKind = "intake"

// writeIntake writes a batch of intake rows to the store: for each user
// and thread the rows name, the user and thread if new, then the messages
// the store does not hold yet (by id) and their jobs, and each thread's
// newest sequence number.
func (db *DB) writeIntake(ctx context.Context, tx *sql.Tx, batch []intakeRow) error {
	users := map[memento.Scope]bool{}
	threads := map[threadKey]int64{} // the newest sequence number of each
	// updated is when each thread's newest message was acknowledged:
	// the thread's time of update, as if the append had written it.
	updated := map[threadKey]time.Time{}
	var order []threadKey
	var fresh []memento.Message
	// The jobs of each message stored, enqueued message by message as
	// their appends would have (insertJobs merges equal jobs of one
	// call).
	type messageJobs struct {
		s    memento.Scope
		jobs []memento.JobRequest
	}
	var jobs []messageJobs
	for _, r := range batch {
		m := r.msg
		s := memento.Scope{Tenant: m.Tenant, User: m.User}
		if !users[s] {
			if _, err := db.ensureUserAt(ctx, tx, s, m.CreatedAt); err != nil {
				return err
			}
			users[s] = true
		}
		k := threadKey{s, m.Thread}
		last, ok := threads[k]
		if !ok {
			if err := db.ensureThreadAt(ctx, tx, s, m.Thread, m.CreatedAt); err != nil {
				return err
			}
			if err := db.prepared(tx).QueryRowContext(ctx, sqlThreadSeq, s.Tenant, s.User, m.Thread).Scan(&last); err != nil {
				return fmt.Errorf("read thread: %w", err)
			}
			order = append(order, k)
		}
		old, found, err := db.storedMessage(ctx, db.prepared(tx), s, m.ID, nil, nil)
		if err != nil {
			return err
		}
		if found {
			if checkRepeat(m, old, m.Thread) != nil {
				db.logger.Warn("intake: an acknowledged message's id was stored meanwhile by another message; the store keeps that one",
					"tenant", s.Tenant, "user", s.User, "message", m.ID)
			}
			threads[k] = last
			continue
		}
		if m.Seq <= last {
			// Another writer of the file (another process) wrote to
			// the thread since the append read its newest number.
			db.logger.Warn("intake: a message's sequence number was taken meanwhile; it follows the thread's newest",
				"tenant", s.Tenant, "user", s.User, "thread", m.Thread, "message", m.ID, "acknowledged", m.Seq, "stored", last+1)
			m.Seq = last + 1
		}
		threads[k] = m.Seq
		updated[k] = m.CreatedAt
		fresh = append(fresh, m)
		if len(r.jobs) > 0 {
			mj := messageJobs{s: s}
			for _, j := range r.jobs {
				mj.jobs = append(mj.jobs, memento.JobRequest{Kind: j.Kind, Payload: j.Payload, MaxAttempts: j.MaxAttempts, ByUser: j.ByUser, Coalesce: j.Coalesce})
			}
			jobs = append(jobs, mj)
		}
	}
	for len(fresh) > 0 {
		n := min(len(fresh), messageRows)
		if err := insertMessageRows(ctx, db.prepared(tx), fresh[:n]); err != nil {
			return err
		}
		fresh = fresh[n:]
	}
	for _, k := range order {
		at, ok := updated[k]
		if !ok {
			continue // every message of the thread was stored already
		}
		if _, err := db.prepared(tx).ExecContext(ctx, `UPDATE threads SET last_seq = max(last_seq, ?), updated_at = max(updated_at, ?)
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, threads[k], nanos(at), k.scope.Tenant, k.scope.User, k.thread); err != nil {
			return fmt.Errorf("update thread: %w", err)
		}
	}
	for _, mj := range jobs {
		if err := db.insertJobs(ctx, tx, mj.s, mj.jobs); err != nil {
			return err
		}
	}
	return nil
}
