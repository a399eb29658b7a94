package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// watchedThreads counts the turns between their first read of the thread
// and the end of their save: the span a slot must cover.
type watchedThreads struct {
	*sqlite.DB
	mu             sync.Mutex
	inFlight, most int
}

func (w *watchedThreads) ThreadState(ctx context.Context, s memento.Scope, thread string) (*memento.ThreadState, error) {
	w.mu.Lock()
	w.inFlight++
	w.most = max(w.most, w.inFlight)
	w.mu.Unlock()
	// Long enough that turns not held back would all be here at once.
	time.Sleep(20 * time.Millisecond)
	return w.DB.ThreadState(ctx, s, thread)
}

func (w *watchedThreads) SaveTurn(ctx context.Context, t memento.Turn) ([]memento.Message, error) {
	defer func() {
		w.mu.Lock()
		w.inFlight--
		w.mu.Unlock()
	}()
	return w.DB.SaveTurn(ctx, t)
}

// TestSlotsBoundTheTurnsComputing: eight turns on eight threads at once,
// through an agent of two slots, compute two at a time from their first
// read to their durable save, and all of them answer.
func TestSlotsBoundTheTurnsComputing(t *testing.T) {
	cat := testCatalog()
	db := sqlitetest.Open(t)
	w := &watchedThreads{DB: db}
	a := newAgent(t, db, cat, cat)
	a.Threads = w
	a.Slots = agent.NewSlots(2)
	const turns = 8
	var wg sync.WaitGroup
	for i := range turns {
		wg.Go(func() {
			if _, err := a.Turn(context.Background(), tenant, agent.Request{User: "u1", Thread: fmt.Sprintf("t%d", i), Message: "Recommend 3 comedies"}); err != nil {
				t.Errorf("turn %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if w.most != 2 {
		t.Errorf("%d turns computed at once, want the 2 slots' worth", w.most)
	}
	st := a.Slots.Stats()
	if st.Size != 2 || st.Computing != 0 || st.Waiting != 0 || st.Taken != turns || st.Waited <= 0 {
		t.Errorf("slots after the turns: %+v, want 2 slots, none computing or waiting, %d taken and some time waited", st, turns)
	}
	for i := range turns {
		msgs, err := db.Messages(context.Background(), memento.Scope{Tenant: tenant, User: "u1"}, fmt.Sprintf("t%d", i), 0, 0)
		if err != nil || len(msgs) != 2 {
			t.Errorf("thread t%d holds %d messages (%v), want the turn's 2", i, len(msgs), err)
		}
	}
}

// blockingModel holds the turns whose message says "wait" in
// UnderstandRequest until release is closed.
type blockingModel struct {
	agent.Model
	entered chan string
	release chan struct{}
}

func (m blockingModel) UnderstandRequest(ctx context.Context, in memento.UnderstandInput) (*memento.Understanding, error) {
	if strings.Contains(in.Message, "wait") {
		m.entered <- in.Message
		<-m.release
	}
	return m.Model.UnderstandRequest(ctx, in)
}

// TestSlotWait: a turn waiting behind another turn of its thread holds no
// slot; a turn whose context ends while it waits for one ends with the
// context's error and stores nothing; the others go on once the slot is
// free.
func TestSlotWait(t *testing.T) {
	cat := testCatalog()
	db := sqlitetest.Open(t)
	a := newAgent(t, db, cat, cat)
	model := blockingModel{Model: a.Model, entered: make(chan string, 4), release: make(chan struct{})}
	a.Model = model
	a.Slots = agent.NewSlots(1)
	s := memento.Scope{Tenant: tenant, User: "u1"}
	ctx := context.Background()

	errs := make(chan error, 3)
	send := func(ctx context.Context, thread, msg string) {
		_, err := a.Turn(ctx, tenant, agent.Request{User: "u1", Thread: thread, Message: msg})
		errs <- err
	}
	// The first turn holds the slot in the model; the second, on its
	// thread, waits for the thread.
	go send(ctx, "t1", "Recommend 3 comedies, wait")
	if got := <-model.entered; got != "Recommend 3 comedies, wait" {
		t.Fatalf("the model got %q first", got)
	}
	go send(ctx, "t1", "more like that, wait")
	time.Sleep(50 * time.Millisecond)
	if st := a.Slots.Stats(); st.Computing != 1 || st.Waiting != 0 {
		t.Fatalf("with a turn in the model and one waiting for its thread: %+v, want 1 computing and none waiting for a slot", st)
	}
	// A turn on another thread waits for the slot until its context ends.
	cctx, cancel := context.WithCancel(ctx)
	go send(cctx, "t2", "Recommend 3 horror movies")
	deadline := time.Now().Add(5 * time.Second)
	for a.Slots.Stats().Waiting != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the turn on t2 never waited for a slot: %+v", a.Slots.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("the turn whose context ended while it waited: %v, want context.Canceled", err)
	}
	if msgs, err := db.Messages(ctx, s, "t2", 0, 0); len(msgs) != 0 {
		t.Errorf("the cancelled turn stored %d messages (%v)", len(msgs), err)
	}
	if st := a.Slots.Stats(); st.Waiting != 0 || st.Computing != 1 || st.Waited != 0 {
		t.Errorf("after the cancelled wait: %+v, want 1 computing, none waiting and no wait counted (the only wait was given up)", st)
	}
	close(model.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	msgs, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("t1 holds %d messages (%v), want both turns' 4", len(msgs), err)
	}
	if st := a.Slots.Stats(); st.Computing != 0 || st.Taken != 2 {
		t.Errorf("at the end: %+v, want none computing and 2 slots taken (the cancelled turn took none)", st)
	}
}
