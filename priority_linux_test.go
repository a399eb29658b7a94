package memento

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestLowerPriority holds the background's computations to their lower
// priority and every other goroutine to the normal one: while and after
// the background computes, a goroutine of a request never runs on a
// lowered thread. A process that may not raise a thread back is refused,
// and leaves no lowered thread behind either.
func TestLowerPriority(t *testing.T) {
	normal := onThread()
	if normal < -20 {
		t.Fatal("cannot read the thread's priority")
	}
	t.Run("may not raise", func(t *testing.T) {
		// setThreadNice as a process without CAP_SYS_NICE has it: the
		// nice value may grow, not fall.
		refuseRaise := func(n int) error {
			cur, err := threadNice()
			if err != nil {
				return err
			}
			if n < cur {
				return syscall.EACCES
			}
			return setThreadNice(n)
		}
		if p, err := probePriority(5, refuseRaise); err == nil || !strings.Contains(err.Error(), "CAP_SYS_NICE") {
			t.Errorf("probe where a thread cannot be raised back: %+v, %v; want an error naming CAP_SYS_NICE", p, err)
		}
		checkIdleThreads(t, normal)
	})
	t.Run("may raise", func(t *testing.T) {
		if !canRaise() {
			t.Skip("this process may not raise a thread's priority (no CAP_SYS_NICE)")
		}
		p, err := probePriority(5, setThreadNice)
		if err != nil {
			t.Fatal(err)
		}
		if p.normal != normal || p.lowered != min(normal+5, 19) {
			t.Fatalf("probe: %+v, want normal %d", *p, normal)
		}
		g := NewProcessorGate(2)
		g.prio = p
		bg := WithProcessorGate(InBackground(context.Background()), g)
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for range 4 {
			wg.Add(2)
			go func() { // background work
				defer wg.Done()
				for range 50 {
					_, release, err := Compute(bg)
					if err != nil {
						errs <- err.Error()
						return
					}
					if n, _ := threadNice(); n != p.lowered {
						errs <- "a computation ran at the normal priority"
					}
					release()
				}
			}()
			go func() { // a request's goroutine
				defer wg.Done()
				for range 200 {
					if n := onThread(); n != normal {
						errs <- "a request's goroutine ran on a lowered thread"
						return
					}
					runtime.Gosched()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		checkIdleThreads(t, normal)
	})
}

// checkIdleThreads takes every idle thread at once, and more: a thread
// left lowered would be among them.
func checkIdleThreads(t *testing.T, normal int) {
	t.Helper()
	var hold, done sync.WaitGroup
	release := make(chan struct{})
	lowered := make(chan int, 64)
	for range 32 {
		hold.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if n, _ := threadNice(); n != normal {
				lowered <- n
			}
			hold.Done()
			<-release
		}()
	}
	hold.Wait()
	close(release)
	done.Wait()
	close(lowered)
	for n := range lowered {
		t.Errorf("an idle thread kept the background's nice value %d", n)
	}
}

// onThread reads the nice value of the thread the calling goroutine runs
// on, or -100 when it cannot.
func onThread() int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n, err := threadNice()
	if err != nil {
		return -100
	}
	return n
}

// canRaise reports whether this process may lower a thread's nice value
// (root, or CAP_SYS_NICE).
func canRaise() bool {
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread() // ends with the goroutine, whatever happens
		n, err := threadNice()
		if err != nil || n >= 19 || setThreadNice(n+1) != nil {
			ok <- false
			return
		}
		ok <- setThreadNice(n) == nil
	}()
	return <-ok
}

func TestLowerPriorityRange(t *testing.T) {
	g := NewProcessorGate(1)
	for _, by := range []int{0, -1, 20} {
		if err := g.LowerPriority(by); ErrorCode(err) != EINVALID {
			t.Errorf("LowerPriority(%d): %v, want EINVALID", by, err)
		}
	}
	if g.prio != nil {
		t.Error("a refused value changed the gate")
	}
	if !canRaise() {
		t.Skip("this process may not raise a thread's priority (no CAP_SYS_NICE)")
	}
	if err := g.LowerPriority(3); err != nil {
		t.Fatal(err)
	}
	if g.prio == nil || g.prio.lowered != min(g.prio.normal+3, 19) {
		t.Errorf("LowerPriority(3) set %+v", g.prio)
	}
}
