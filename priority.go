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
// process that may not raise a thread's priority back (the nice value
// may only grow without CAP_SYS_NICE or an RLIMIT_NICE of 20) cannot
// give a thread back, and a lowered goroutine that kept its thread after
// its computation would hold one of Go's processors the gate no longer
// counts, starved by the kernel, with goroutines queued behind it (every
// job's goroutine lowered throughout, tried: the scheduler's p99 went
// from 4-5 ms to 10-13 ms). LowerPriority therefore refuses there, and
// the background computes at the normal priority.

// threadPriority is the nice values a gate's work runs at.
type threadPriority struct {
	normal, lowered int
	// setNice sets the calling thread's nice value (setThreadNice; tests
	// replace it).
	setNice func(int) error
}

// LowerPriority makes the work that computes on g run by nice values
// above the process's own (1 to 19), on Linux. It returns an error, and
// the gate computes at the normal priority, when by is out of range, when
// this system gives threads no priority of their own, or when the
// process may not raise a thread's priority back. Call it before g is
// used.
func (g *ProcessorGate) LowerPriority(by int) error {
	if by < 1 || by > 19 {
		return Errorf(EINVALID, "the background's nice value must be between 1 and 19, got %d", by)
	}
	p, err := probePriority(by, setThreadNice)
	if err != nil {
		return err
	}
	g.prio = p
	return nil
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
		if e := set(p.normal); e != nil {
			// Stays locked: Go ends the lowered thread with this
			// goroutine.
			err = fmt.Errorf("raise a thread's priority back (needs CAP_SYS_NICE, or an RLIMIT_NICE of 20: ulimit -e 20): %w", e)
			return
		}
		runtime.UnlockOSThread()
	}()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return p, nil
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
		// A refused setpriority(2) changed nothing.
		runtime.UnlockOSThread()
		return func() {}
	}
	return func() {
		if p.setNice(p.normal) != nil {
			return // stays locked: Go ends the thread with the goroutine
		}
		runtime.UnlockOSThread()
	}
}
