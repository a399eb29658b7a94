package http

import (
	"net"
	"sync"
)

// limitListener caps the connections a server holds open at once.
//
// Past the cap, Accept waits for a connection to close before it takes the
// next one. The connections beyond the cap wait in the kernel's accept
// queue, holding no file descriptor, goroutine or buffer of this process,
// and once that queue is full the kernel turns new ones away. The
// alternative, accepting and closing at once, spends a descriptor and a
// system call per attempt and makes a burst of honest clients see resets;
// waiting makes them see latency instead, and they are served as slots
// free. Slow clients cannot hold a slot for long: the server's header,
// read and idle timeouts close their connections.
type limitListener struct {
	net.Listener
	slots     chan struct{} // one element per open connection
	done      chan struct{} // closed by Close, to end a waiting Accept
	closeOnce sync.Once
	// opened and closed, when set, are told of each connection taken and
	// released (the server's connection gauge).
	opened, closed func()
}

// newLimitListener wraps ln so that at most max of its connections are
// open at once.
func newLimitListener(ln net.Listener, max int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	if l.opened != nil {
		l.opened()
	}
	return &limitConn{Conn: c, l: l}, nil
}

// Close stops accepting, ending an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed, once however often Close is
// called.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		<-c.l.slots
		if c.l.closed != nil {
			c.l.closed()
		}
	})
	return err
}
