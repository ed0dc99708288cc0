package h1

import (
	"bufio"
	"fmt"
	"net"
	"sync"
)

// replayConn is a connection handed over: its reads return the bytes the
// server had buffered first.
type replayConn struct {
	net.Conn
	br *bufio.Reader
}

// Read reads the buffered bytes, then the connection.
func (r *replayConn) Read(p []byte) (int, error) {
	if r.br != nil {
		if r.br.Buffered() > 0 {
			return r.br.Read(p)
		}
		r.br = nil
	}
	return r.Conn.Read(p)
}

// handover is the listener of the connections handed over.
type handover struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// newHandover makes a handover listener.
func newHandover() *handover {
	return &handover{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// give hands c over, or closes it once the listener is closed.
func (h *handover) give(c net.Conn) {
	select {
	case h.conns <- c:
	case <-h.closed:
		c.Close()
	}
}

// Accept returns the next connection handed over.
func (h *handover) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.closed:
		return nil, fmt.Errorf("h1 handover: %w", net.ErrClosed)
	}
}

// Close closes the listener.
func (h *handover) Close() error {
	h.once.Do(func() { close(h.closed) })
	return nil
}

// Addr is a name of the listener.
func (h *handover) Addr() net.Addr { return handoverAddr{} }

// handoverAddr names the handover listener.
type handoverAddr struct{}

// Network names the listener's network.
func (handoverAddr) Network() string { return "h1" }

// String names the listener.
func (handoverAddr) String() string { return "h1-handover" }
