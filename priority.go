package memento

import (
	"fmt"
	"runtime"
	"sync"
)

// The background's priority.
//
// A ProcessorGate leaves the requests a processor of their own only in
// number: Go's scheduler has no priorities, so on a machine whose
// processors the background keeps busy, an acknowledgement's goroutines
// (the request, the store's writer, the log's sync) wait in the run queue
// behind the jobs' computations, for 20 ms at the 99th percentile at 500
// messages a second on two processors (`memento bench`, queueAtRate's
// scheduling). The operating system has priorities. LowerPriority makes
// the goroutine that holds a processor of the gate (Compute) run on an
// operating-system thread of its own, at a higher nice value, until it
// gives the processor back; with more of Go's processors than the
// machine's (GOMAXPROCS; the engine adds the gate's size), a goroutine of
// a request always finds one of Go's processors free, and the kernel runs
// its thread ahead of the background's. Only Linux gives a thread a nice
// value of its own; elsewhere LowerPriority reports that it cannot.
//
// No goroutine of a request ever runs on a lowered thread: a thread is
// lowered only while it is locked to the background goroutine that took
// the processor, and is unlocked only once its priority is back. A
// process that may not raise a thread's priority again (the nice value
// may only grow without CAP_SYS_NICE or RLIMIT_NICE) keeps the thread
// locked to that goroutine, which is background work to its end, and Go
// ends the thread with it.

// threadPriority is the nice values a gate's work runs at.
type threadPriority struct {
	normal, lowered int
	// sticky says that a lowered thread cannot be raised again.
	sticky bool
	// setNice sets the calling thread's nice value (setThreadNice; tests
	// replace it).
	setNice func(int) error
}

// LowerPriority makes the work that computes on g run by nice values
// above the process's own (1 to 19), on Linux. It reports whether a
// thread, once lowered, stays so (the process may not raise it back),
// and an error when this system gives threads no priority of their own
// or by is out of range; the gate then computes at the normal priority.
// Call it before g is used.
func (g *ProcessorGate) LowerPriority(by int) (sticky bool, err error) {
	if by < 1 || by > 19 {
		return false, Errorf(EINVALID, "the background's nice value must be between 1 and 19, got %d", by)
	}
	p, err := probePriority(by, setThreadNice)
	if err != nil {
		return false, err
	}
	g.prio = p
	return p.sticky, nil
}

// probePriority reads the process's nice value and tries, on a thread of
// its own, to lower a thread by and to raise it back with set.
func probePriority(by int, set func(int) error) (*threadPriority, error) {
	var p *threadPriority
	var err error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The thread is tried on its own: should it stay lowered, it
		// ends with this goroutine.
		runtime.LockOSThread()
		normal, e := threadNice()
		if e != nil {
			err = fmt.Errorf("read the thread's priority: %w", e)
			runtime.UnlockOSThread()
			return
		}
		p = &threadPriority{normal: normal, lowered: min(normal+by, 19), setNice: set}
		if e := set(p.lowered); e != nil {
			err = fmt.Errorf("lower a thread's priority: %w", e)
			runtime.UnlockOSThread()
			return
		}
		if set(p.normal) != nil {
			p.sticky = true
			return // stays locked: Go ends the lowered thread
		}
		runtime.UnlockOSThread()
	}()
	wg.Wait()
	return p, err
}

// lower runs the calling goroutine on a thread of its own at the lowered
// priority, and returns the function that raises the thread back and
// lets it go. A nil p, or a thread that cannot be lowered, changes
// nothing.
func (p *threadPriority) lower() func() {
	if p == nil {
		return func() {}
	}
	runtime.LockOSThread()
	if p.setNice(p.lowered) != nil {
		p.setNice(p.normal) // whatever it did
		runtime.UnlockOSThread()
		return func() {}
	}
	if p.sticky {
		// The thread stays locked, and lowered, until the goroutine
		// ends; each Compute locks it once more, which is harmless.
		return func() {}
	}
	return func() {
		if p.setNice(p.normal) != nil {
			return // stays locked: Go ends the thread with the goroutine
		}
		runtime.UnlockOSThread()
	}
}
