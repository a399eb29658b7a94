package agent

import (
	"context"
	"sync/atomic"
	"time"
)

// Turn slots.
//
// With the offline model a turn computes from its first read to its save:
// it reads the thread, recalls, understands, searches, ranks and writes
// its reply on this machine's processors, and then its save holds the
// store's one writer for about a millisecond. Go's scheduler has no
// priorities, so when many turns come at once they share the processors
// with everything else a server does: the goroutines of an append's
// acknowledgement and of a context read, and the store's writer, which
// every acknowledgement waits for. Under `memento torture load --clients
// 64` on two processors, 58 of the 64 clients were in a turn at any
// moment (291 turns a second of 0.2 s each); an append waited 6 ms on
// average for the writer to begin its write (p99 25-50 ms), the
// writer took 10-25 ms at the p99 for a batch of two milliseconds'
// statements because its goroutine waited for a processor, and the
// turns' saves held the writer for 8 of every 20 seconds. The appends'
// p99 was about 55 ms, and the background, left what the turns did not
// take, formed the memories of a third of the messages stored. With two
// slots, the appends' p99 was 20-23 ms, the context reads' fell from
// about 110 ms to 25, and the background formed most messages'
// memories while the load ran, a second or two after them (docs/BENCHMARKS.md, "Chat turns in
// slots").
//
// Slots bounds how many turns compute at once; the others wait for a slot
// in the order they came (a channel's blocked senders are served first in,
// first out), holding no processor and no place in the writer's queue. A
// turn takes its slot once its thread is its own (the per-thread lock,
// and the store's), so that a turn waiting behind another turn of its
// thread holds none, and keeps it until its save is durable: the save is
// the part of a turn that the writer serialises, and a slot given back
// before it would let the turns' saves crowd the writer as before.
//
// A slot is held for the whole turn, model calls included. Where the
// model, the embedder or the emotion tagger is a server, a turn mostly
// waits on the network, and a bound of a few turns would bound the
// throughput to a few calls at a time; the engine bounds turns by
// default only when they compute here (engine.Config.TurnSlots).
type Slots struct {
	slot chan struct{}
	// waiting counts the turns waiting for a slot now; taken the slots
	// taken since the start, and waited the time the turns that took them
	// spent waiting (nanoseconds): a wait given up counts in neither, so
	// waited/taken is the mean wait of a turn that computed.
	waiting atomic.Int64
	taken   atomic.Int64
	waited  atomic.Int64
}

// NewSlots returns n slots (at least one).
func NewSlots(n int) *Slots {
	return &Slots{slot: make(chan struct{}, max(n, 1))}
}

// SlotStats is what Slots.Stats reports.
type SlotStats struct {
	// Size is the number of slots; Computing the turns holding one now,
	// Waiting those waiting for one.
	Size      int
	Computing int
	Waiting   int
	// Taken counts the slots taken since the start, and Waited the time
	// the turns that took them spent waiting (a wait given up, its turn
	// ended, counts in neither).
	Taken  int64
	Waited time.Duration
}

// Stats reports the slots' use.
func (s *Slots) Stats() SlotStats {
	return SlotStats{
		Size: cap(s.slot), Computing: len(s.slot), Waiting: int(s.waiting.Load()),
		Taken: s.taken.Load(), Waited: time.Duration(s.waited.Load()),
	}
}

// take waits for a slot until ctx ends, and returns the function that
// gives it back. Nil slots bound nothing.
func (s *Slots) take(ctx context.Context) (give func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	select {
	case s.slot <- struct{}{}:
	default:
		start := time.Now()
		s.waiting.Add(1)
		select {
		case s.slot <- struct{}{}:
		case <-ctx.Done():
			err = ctx.Err()
		}
		s.waiting.Add(-1)
		if err != nil {
			return nil, err
		}
		s.waited.Add(int64(time.Since(start)))
	}
	s.taken.Add(1)
	return func() { <-s.slot }, nil
}
