package memento

import (
	"context"
	"encoding/json"
	"time"
)

// UserService keeps users.
type UserService interface {
	// EnsureUser creates the user if it does not exist and returns it.
	// Errors: EINVALID for an empty id.
	EnsureUser(ctx context.Context, s Scope) (*User, error)
	// DeleteUser forgets everything about a user: threads, messages,
	// summaries, events, memories and pending jobs. Errors: ENOTFOUND.
	DeleteUser(ctx context.Context, s Scope) error
}

// AppendResult reports what AppendMessages stored.
type AppendResult struct {
	// Messages are the stored messages in order, with their ids and
	// sequence numbers, including those that already existed.
	Messages   []Message `json:"messages"`
	Inserted   int       `json:"inserted"`
	Duplicates int       `json:"duplicates"`
}

// MessageLog is the durable log of what was said in each thread.
type MessageLog interface {
	// AppendMessages stores msgs in the thread (creating the user and the
	// thread as needed) and, in the same transaction, the jobs that
	// jobsFor returns for each newly stored message. A message whose id is
	// already stored in the scope is left as it is and gets no jobs, which
	// makes a repeated call change nothing. It returns only once the
	// messages and their jobs are durable. Errors: EINVALID (empty text,
	// unknown role).
	AppendMessages(ctx context.Context, s Scope, thread string, msgs []Message, jobsFor func(Message) []JobRequest) (*AppendResult, error)
	// Messages lists a thread's messages with Seq > afterSeq in order, at
	// most limit of them (0: no limit). Errors: ENOTFOUND for an unknown thread.
	Messages(ctx context.Context, s Scope, thread string, afterSeq int64, limit int) ([]Message, error)
}

// Turn is everything one agent turn writes, stored in one transaction: the
// user's message and the reply, the thread's new state and the background
// jobs for the turn.
type Turn struct {
	Scope    Scope
	Thread   string
	Messages []Message
	State    ThreadState
	// Jobs are enqueued with the turn; their payloads may need the stored
	// messages' sequence numbers, so JobsFor is called with them.
	JobsFor func(stored []Message) []JobRequest
	// CheckSeq makes the save conditional: it fails with ECONFLICT, storing
	// nothing, unless the thread's newest message is still BaseSeq (the
	// State.LastSeq the turn was computed from; 0 for a new thread). Two
	// turns computed from one state cannot then both land, the second
	// silently overwriting the first's active context.
	CheckSeq bool
	BaseSeq  int64
	// Events are actions the turn revealed ("I've already seen Heat":
	// watched; "not Heat": skipped), stored with it as AddEvents stores
	// them (an id already stored is skipped), with the jobs EventJobs
	// returns for each new one.
	Events    []Event
	EventJobs func(Event) []JobRequest
	// Answer, when set, is the answer the agent gave (its JSON, as
	// POST /v1/chat returns it), stored with the turn's last message so a
	// page reloaded later shows the cards and reasons of every turn.
	Answer json.RawMessage
}

// TurnAnswer is a stored agent answer and the message it belongs to.
type TurnAnswer struct {
	// Message is the id of the assistant message the answer came with.
	Message string          `json:"message"`
	Seq     int64           `json:"seq"`
	Answer  json.RawMessage `json:"answer"`
}

// ThreadService keeps threads, their active contexts and summaries.
type ThreadService interface {
	// ThreadState returns the thread's state. A thread that does not exist
	// yet has an empty state (new context, nothing shown) and no error.
	ThreadState(ctx context.Context, s Scope, thread string) (*ThreadState, error)
	// SaveTurn stores a turn atomically. Errors: EINVALID; ECONFLICT when
	// t.CheckSeq is set and the thread moved past t.BaseSeq, or when a
	// message id is already stored with another text, role or thread.
	SaveTurn(ctx context.Context, t Turn) ([]Message, error)
	// SetThreadContext replaces the thread's active context, as a user
	// editing it (removing a constraint) does before the next turn.
	// Errors: ENOTFOUND for an unknown thread, EINVALID.
	SetThreadContext(ctx context.Context, s Scope, thread string, ac ActiveContext) error
	// Threads lists a user's threads, most recently updated first.
	Threads(ctx context.Context, s Scope) ([]Thread, error)
	// AppendSummary adds a summary to the thread's list. Errors: ENOTFOUND.
	AppendSummary(ctx context.Context, s Scope, sum Summary) (*Summary, error)
	// LatestSummary returns the newest summary of the thread, or nil when
	// there is none.
	LatestSummary(ctx context.Context, s Scope, thread string) (*Summary, error)
	// Summaries lists a thread's summaries, oldest first.
	Summaries(ctx context.Context, s Scope, thread string) ([]Summary, error)
	// Answers returns the newest limit stored answers of the thread,
	// oldest first (limit <= 0: all). An unknown thread has none.
	Answers(ctx context.Context, s Scope, thread string, limit int) ([]TurnAnswer, error)
}

// EventService keeps the actions users took on titles.
type EventService interface {
	// AddEvents stores events (creating the user as needed) and, in the
	// same transaction, the jobs jobsFor returns for each new one. An
	// event whose id is already stored is skipped. Errors: EINVALID.
	AddEvents(ctx context.Context, s Scope, events []Event, jobsFor func(Event) []JobRequest) (inserted int, err error)
	// Events lists a user's events in the order they happened.
	Events(ctx context.Context, s Scope) ([]Event, error)
}

// UserEvents is one read of a user's events from an events mark
// (sqlite.DB.UserEventsSince): what an incremental profile recompute
// folds.
type UserEvents struct {
	// Events are the user's events added after the mark asked for, in the
	// order they happened.
	Events []Event
	// Mark is the events mark of the read: every event of the user up to
	// it was returned by this read or by the reads up to the mark asked
	// for.
	Mark int64
	// Total counts all of the user's events at the read, old and new, so
	// a caller that folded the earlier ones can check it missed none.
	Total int
	// Created is when the user was created, zero when the user does not
	// exist: a user forgotten and created again was created at another
	// time.
	Created time.Time
}

// TitleService keeps the catalog's titles in the store, so an imported
// catalog outlives the process.
type TitleService interface {
	// PutTitles inserts or updates titles; with replace, every other title
	// is removed first. It returns how many titles were written.
	PutTitles(ctx context.Context, titles []Title, replace bool) (int, error)
	// Titles returns every stored title.
	Titles(ctx context.Context) ([]Title, error)
	// CountTitles counts the stored titles.
	CountTitles(ctx context.Context) (int, error)
}

// ThreadLocker serialises the turns of one thread across processes. A
// store that several servers share implements it, so that two servers
// given turns of one thread take them one after the other instead of
// computing both and throwing one away (Turn.CheckSeq still guards the
// write). A store of one process need not.
type ThreadLocker interface {
	// LockThread waits until no other holder has the thread, or ctx
	// ends, and returns the function that releases it. The lock is a
	// lease renewed while held, so the lock of a process that died is
	// taken over once its lease lapses. Errors: EUNAVAILABLE when ctx
	// ends first; EINVALID for a bad scope or thread.
	LockThread(ctx context.Context, s Scope, thread string) (unlock func(), err error)
}
