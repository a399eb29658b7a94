package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
)

// concurrentTurns is how many turns the concurrency tests save at once on
// one thread.
const concurrentTurns = 32

// testConcurrentTurns saves many turns on one thread at once, without
// CheckSeq: every message lands once, the sequence has no gap or repeat,
// and each turn's two messages are next to each other, in order.
func testConcurrentTurns(t *testing.T, open Opener) {
	st := open(t)
	var wg sync.WaitGroup
	errs := make(chan error, concurrentTurns)
	for i := range concurrentTurns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.SaveTurn(noCtx(), memento.Turn{Scope: ann, Thread: "t1",
				Messages: []memento.Message{
					{ID: fmt.Sprintf("u%02d", i), Role: memento.RoleUser, Text: fmt.Sprintf("q%02d", i)},
					{ID: fmt.Sprintf("a%02d", i), Role: memento.RoleAssistant, Text: fmt.Sprintf("r%02d", i)},
				},
				State:   memento.ThreadState{Context: memento.NewActiveContext(), LastShown: []string{}},
				JobsFor: jobsPerTurn,
			})
			if err != nil {
				errs <- fmt.Errorf("turn %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkTurns(t, st, concurrentTurns)
	if n := len(jobsOf(t, st, "turn-job")); n != concurrentTurns {
		t.Errorf("%d turn jobs, want %d", n, concurrentTurns)
	}
}

// testConcurrentCheckedTurns saves many turns on one thread at once, each
// computed from the state it read and saved with CheckSeq, retrying the
// whole turn on ECONFLICT as the agent does: every turn lands once, in
// order, and none overwrites another's state unseen.
func testConcurrentCheckedTurns(t *testing.T, open Opener) {
	st := open(t)
	var wg sync.WaitGroup
	errs := make(chan error, concurrentTurns)
	var mu sync.Mutex
	conflicts := 0
	for i := range concurrentTurns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt := 0; ; attempt++ {
				state, err := st.ThreadState(noCtx(), ann, "t1")
				if err != nil {
					errs <- fmt.Errorf("turn %d: read state: %w", i, err)
					return
				}
				// The turn's state builds on what it read: the titles
				// shown so far, plus its own.
				shown := append(slices.Clone(state.Shown), fmt.Sprintf("title:%02d", i))
				_, err = st.SaveTurn(noCtx(), memento.Turn{Scope: ann, Thread: "t1", CheckSeq: true, BaseSeq: state.LastSeq,
					Messages: []memento.Message{
						{ID: fmt.Sprintf("u%02d", i), Role: memento.RoleUser, Text: fmt.Sprintf("q%02d", i)},
						{ID: fmt.Sprintf("a%02d", i), Role: memento.RoleAssistant, Text: fmt.Sprintf("r%02d", i)},
					},
					State:   memento.ThreadState{Context: memento.NewActiveContext(), LastShown: []string{}, Shown: shown},
					JobsFor: jobsPerTurn,
				})
				if memento.ErrorCode(err) == memento.ECONFLICT && attempt < 10*concurrentTurns {
					mu.Lock()
					conflicts++
					mu.Unlock()
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("turn %d: %w", i, err)
				}
				return
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkTurns(t, st, concurrentTurns)
	state, err := st.ThreadState(t.Context(), ann, "t1")
	if err != nil {
		t.Fatalf("ThreadState: %v", err)
	}
	// Every turn's title is in the final state: no turn was lost.
	if len(state.Shown) != concurrentTurns {
		t.Errorf("final state shows %d titles, want %d (a checked turn overwrote another): %v", len(state.Shown), concurrentTurns, state.Shown)
	}
	if n := len(jobsOf(t, st, "turn-job")); n != concurrentTurns {
		t.Errorf("%d turn jobs, want %d (a refused turn must enqueue nothing)", n, concurrentTurns)
	}
	t.Logf("%d conflicts retried", conflicts)
}

func jobsPerTurn([]memento.Message) []memento.JobRequest {
	return []memento.JobRequest{{Kind: "turn-job", Payload: "turn"}}
}

// checkTurns checks that thread t1 of ann holds n turns of two messages
// each, numbered 1 to 2n, each turn's question right before its answer.
func checkTurns(t *testing.T, st Store, n int) {
	t.Helper()
	msgs := messagesOK(t, st, ann, "t1")
	if len(msgs) != 2*n {
		t.Fatalf("thread holds %d messages, want %d", len(msgs), 2*n)
	}
	seen := map[string]bool{}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d, want %d (a gap or a repeat)", i, m.Seq, i+1)
		}
		if seen[m.ID] {
			t.Errorf("message %s stored twice", m.ID)
		}
		seen[m.ID] = true
		if i%2 == 1 {
			q, a := msgs[i-1], m
			if q.Role != memento.RoleUser || a.Role != memento.RoleAssistant || q.ID[1:] != a.ID[1:] {
				t.Errorf("messages %d and %d are %s %s and %s %s; want one turn's question and answer in order", i-1, i, q.Role, q.ID, a.Role, a.ID)
			}
		}
	}
	state, err := st.ThreadState(t.Context(), ann, "t1")
	if err != nil || state.LastSeq != int64(2*n) {
		t.Errorf("thread lastSeq = %d (%v), want %d", state.LastSeq, err, 2*n)
	}
}
