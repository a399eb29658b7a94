package memento

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Job kinds of the message log and the agent. Each is handled by one worker
// registered with the Queue.
const (
	JobSummarise = "summarise" // roll a thread's exchange into its summary list
	// JobBacklog runs a batch of one user's backlog (JobRequest.ByUser):
	// the queue enqueues it itself, at most one waiting per user.
	JobBacklog = "backlog"
)

// JobRequest asks for a background job. Stores enqueue them in the same
// transaction as the data they concern, so a job exists if and only if its
// data does. Requests of one transaction that are equal (kind, payload and
// options) are enqueued once, so a component may ask for a job once per
// row without counting (a user's profile once per event of a batch).
type JobRequest struct {
	Kind string
	// Payload is marshalled to JSON and handed back to the worker.
	Payload any
	// MaxAttempts bounds retries; 0 takes the queue's default for the kind.
	MaxAttempts int
	// ByUser puts the job in its user's backlog rather than in the queue
	// as a job of its own. A message's jobs each cost a claim and a
	// completion, and on a single-writer store a transaction each, while
	// the work of many messages of one user shares its reads and writes
	// when it runs in one pass: the queue runs a user's backlog in
	// batches (one JobBacklog job takes what has accumulated), one batch
	// of a user at a time across every process, in the order the jobs
	// were enqueued, with the handler registered by Queue.HandleBacklog.
	// A job of a batch that fails runs again as a job of its own kind.
	ByUser bool
	// Coalesce lets an equal job (same kind and payload) that is waiting
	// to run, and has not started, stand for this one: it will see
	// whatever this job's transaction wrote. For jobs that recompute from
	// the store's state, such as a tenant's model. A store may enqueue it
	// anyway (PostgreSQL does: there a waiting job may start while the
	// transaction that would skip it is still open).
	Coalesce bool
}

// MessageJob is the payload of jobs about one stored message or turn.
type MessageJob struct {
	Tenant  string `json:"tenant"`
	User    string `json:"user"`
	Thread  string `json:"thread"`
	Message string `json:"message"`
	// Seq is the sequence number of the newest message the job covers.
	Seq int64 `json:"seq,omitempty"`
}

// Job states as users see them. A job that used up its attempts, or failed
// with an error that cannot succeed on retry, is failed and stays listed
// with its errors (the dead-letter state) until it is retried.
const (
	JobPending   = "pending"   // waiting to run, or scheduled for a retry
	JobRunning   = "running"   // a worker holds it
	JobRetrying  = "retrying"  // failed at least once and will run again
	JobCompleted = "completed" // done
	JobFailed    = "failed"    // a dead letter: out of attempts or failed for good; kept for inspection
)

// Why a job is failed (Job.Reason).
const (
	// JobOutOfAttempts: every attempt failed, or its processes died
	// while running it, as many times as the job had attempts.
	JobOutOfAttempts = "out-of-attempts"
	// JobPermanent: an attempt failed with an error that cannot succeed
	// on retry (see PermanentJobError), so the job was failed at once.
	JobPermanent = "permanent"
)

// PermanentJobError reports whether a handler's error cannot succeed on
// retry, so that the queue fails the job at once instead of spending its
// attempts (and minutes of backoff) on it: the input itself is invalid
// (EINVALID) or over a limit (ETOOLARGE). An error caused by the attempt's
// context ending is never permanent, since the next attempt gets a new one.
func PermanentJobError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	switch ErrorCode(err) {
	case EINVALID, ETOOLARGE:
		return true
	}
	return false
}

// Job is a background job as the queue reports it.
type Job struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`
	State       string          `json:"state"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"maxAttempts"`
	Payload     json.RawMessage `json:"payload"`
	Errors      []string        `json:"errors"`
	CreatedAt   time.Time       `json:"createdAt"`
	FinalizedAt *time.Time      `json:"finalizedAt"`
	// LastError is the newest of Errors, "" when there is none.
	LastError string `json:"lastError,omitempty"`
	// Reason says why a failed job is a dead letter: JobOutOfAttempts or
	// JobPermanent. It is empty in every other state.
	Reason string `json:"reason,omitempty"`
	// Worker names the queue process that holds a running job, so that
	// a job rescued from a process that died can be told apart.
	Worker string `json:"worker,omitempty"`
}

// JobRetry selects dead letters to run again, after whatever made them
// fail was fixed: either the jobs named by IDs or, with Failed, every
// failed job (of Kind, when it is set).
type JobRetry struct {
	IDs    []int64
	Failed bool
	Kind   string
}

// JobFilter selects jobs to list. Zero values select everything.
type JobFilter struct {
	State string // one of the Job* states
	Kind  string
	Limit int
}

// JobHandler does the work of one job. Returning an error makes the queue
// retry the job later, until its attempts run out; an error for which
// PermanentJobError is true fails the job at once.
type JobHandler func(ctx context.Context, kind string, payload json.RawMessage) error

// JobOptions tune how the queue runs one kind of job.
type JobOptions struct {
	Timeout     time.Duration // per attempt; 0 takes the queue's default
	MaxAttempts int           // 0 takes the queue's default
}

// BacklogJob is a job of a user's backlog (JobRequest.ByUser) as the
// backlog's handler receives it.
type BacklogJob struct {
	// ID orders a user's backlog: jobs are handed over by ascending ID,
	// which is the order they were enqueued in.
	ID      int64
	Kind    string
	Payload json.RawMessage
	// CreatedAt is when the job was enqueued, with its data.
	CreatedAt time.Time
}

// BacklogHandler does the work of a batch of one user's backlog jobs, in
// the order given, in one pass, so that the jobs share their reads and
// their writes. It returns one error per job it ran, in the same order:
// nil for a job that is done, else the job's error, and the queue then
// enqueues that job as a job of its own kind, which its kind's handler
// runs with the queue's retries and dead letter. The jobs after the last
// one it answers for (when ctx ends, or a batch runs out of its time)
// were not run: they stay in the backlog for the next batch. Like every
// handler, it must be idempotent: a batch cut short by a crash runs
// again.
type BacklogHandler func(ctx context.Context, s Scope, jobs []BacklogJob) []error

// BacklogOptions tune how the queue runs the users' backlogs.
type BacklogOptions struct {
	// MaxBatch bounds the jobs of one batch; 0 takes the queue's default.
	MaxBatch int
	// Timeout bounds one batch; 0 takes the queue's default job timeout.
	Timeout time.Duration
}

// Queue runs background jobs. Jobs are enqueued by stores, in the same
// transaction as their data; the queue hands them to the registered
// handlers with bounded retries and a per-attempt timeout.
type Queue interface {
	// Handle registers the handler of a job kind. It must be called before
	// Start.
	Handle(kind string, h JobHandler, opts JobOptions)
	// HandleBacklog registers the handler of the users' backlogs (see
	// JobRequest.ByUser). It must be called before Start. A queue that
	// runs without one hands every backlog job over to its kind's
	// handler, as a job of its own.
	HandleBacklog(h BacklogHandler, opts BacklogOptions)
	// Start begins working jobs until ctx is done or Stop is called.
	Start(ctx context.Context) error
	// Stop waits for running jobs to finish, up to ctx's deadline.
	Stop(ctx context.Context) error
	// Jobs lists jobs, newest first. Errors: EINVALID for an unknown state.
	Jobs(ctx context.Context, f JobFilter) ([]Job, error)
	// Unfinished counts jobs that have not ended (neither completed nor
	// failed), backlog jobs included, so callers can wait for the
	// background work to settle.
	Unfinished(ctx context.Context) (int, error)
	// RetryJobs makes the selected jobs run again as soon as a worker is
	// free, with their errors kept and one more attempt if they had used
	// up theirs, and returns them as they are afterwards. A retrying job
	// named by id runs at once instead of after its backoff. All named
	// jobs are retried or none is. Errors: EINVALID when r selects
	// nothing or both ways, ENOTFOUND for an unknown id, ECONFLICT for a
	// job that is neither failed nor retrying.
	RetryJobs(ctx context.Context, r JobRetry) ([]Job, error)
}
