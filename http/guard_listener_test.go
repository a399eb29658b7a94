package http

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLimitListener checks the slot accounting of the connection cap: a
// closed connection frees its slot once however often it is closed, and
// closing the listener ends an Accept that waits for a slot.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(inner, 1)
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		c   net.Conn
		err error
	}
	next := make(chan result, 1)
	go func() {
		c, err := l.Accept()
		next <- result{c, err}
	}()
	select {
	case r := <-next:
		t.Fatalf("a second connection was accepted while the only slot was taken: %v", r)
	default:
	}
	first.Close()
	first.Close() // a second Close must not free a second slot
	// Generous: only a broken listener takes this long.
	deadline := time.After(10 * time.Second)
	var second net.Conn
	select {
	case r := <-next:
		if r.err != nil {
			t.Fatal(r.err)
		}
		second = r.c
	case <-deadline:
		t.Fatal("closing the first connection did not let the second in")
	}
	defer second.Close()
	if got := len(l.slots); got != 1 {
		t.Errorf("%d slots taken with one connection open, want 1", got)
	}

	go func() {
		c, err := l.Accept()
		next <- result{c, err}
	}()
	l.Close()
	select {
	case r := <-next:
		if !errors.Is(r.err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v, %v; want net.ErrClosed", r.c, r.err)
		}
	case <-deadline:
		t.Fatal("closing the listener did not end the waiting Accept")
	}
}

// TestRecorderHidesReadDeadline pins the property statusRecorder's comment
// relies on: handlers below it (huma) cannot move the connection's read
// deadline, which would cancel a request's context mid-turn.
func TestRecorderHidesReadDeadline(t *testing.T) {
	rec := &statusRecorder{ResponseWriter: httptest.NewRecorder()}
	err := http.NewResponseController(rec).SetReadDeadline(time.Now())
	if !errors.Is(err, http.ErrNotSupported) {
		t.Errorf("SetReadDeadline through statusRecorder = %v, want ErrNotSupported", err)
	}
}
