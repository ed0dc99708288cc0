package mcpclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"
)

// stdioTransport speaks newline-delimited JSON-RPC over a server's stdin
// and stdout.
type stdioTransport struct {
	r      io.Reader
	w      io.WriteCloser
	wmu    sync.Mutex
	s      *Session
	closed sync.Once
	read   chan struct{} // closed once the reader returned
}

// NewStdio returns a transport over a server process's stdout (r) and
// stdin (w). The process itself (start, stderr, stop) is the caller's: the
// session ends when r ends, and Close closes w.
func NewStdio(r io.Reader, w io.WriteCloser) Transport {
	return &stdioTransport{r: r, w: w, read: make(chan struct{})}
}

func (t *stdioTransport) start(s *Session) error {
	t.s = s
	go t.readLoop()
	return nil
}

func (t *stdioTransport) negotiated(string) {}

func (t *stdioTransport) initialized() {}

func (t *stdioTransport) oneStream() bool { return true }

// send writes msg as one line; writes never interleave.
func (t *stdioTransport) send(_ context.Context, msg []byte, _ *pending) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if _, err := t.w.Write(append(msg, '\n')); err != nil {
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

// readLoop reads lines until stdout ends, then ends the session.
func (t *stdioTransport) readLoop() {
	defer close(t.read)
	br := bufio.NewReaderSize(t.r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			t.s.receive(line, nil)
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			t.s.end(fmt.Errorf("the server's stdout ended: %w", err))
			return
		}
	}
}

// close closes stdin; the reader ends when the server exits.
func (t *stdioTransport) close() error {
	var err error
	t.closed.Do(func() { err = t.w.Close() })
	return err
}
