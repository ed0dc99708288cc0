// Package logbuf holds a process's log lines in memory for a moment and
// writes them out together, one system call for many lines.
//
// At its default level the gateway logs a line for every MCP request (the
// access log). Written one at a time to a file, that line cost a relayed
// tools/call a fifth to a quarter of the gateway's CPU for the whole call
// (docs/performance.md, round 10 of issue 16): the write system call far
// more than the formatting. A Writer keeps what it is given until its
// delay has passed since the first line it holds, until it holds its size
// in bytes, or until Flush; through Handler, a record at a given level or
// above (warnings and errors) is written out at once, and Close writes the
// rest, so that a process that stops leaves nothing behind. Only a crash
// loses lines: those of its last delay.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// The delay and size a process's log is held for by default.
const (
	DefaultDelay = 50 * time.Millisecond
	DefaultSize  = 64 << 10
)

// Writer buffers what is written to it for out. It is safe for
// concurrent use; each Write's bytes reach out together, in order.
type Writer struct {
	out   io.Writer
	delay time.Duration
	size  int

	mu     sync.Mutex
	buf    []byte
	timer  *time.Timer // armed while buf holds bytes
	closed bool
}

// New returns a Writer for out that writes what it holds delay after
// the first of it came, or as soon as it holds size bytes.
func New(out io.Writer, delay time.Duration, size int) *Writer {
	return &Writer{out: out, delay: delay, size: size}
}

// Write keeps p to be written later, or writes it at once, with what was
// kept before it, when that makes the Writer's size or it is closed.
// It reports out's error only for a write it made.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= w.size {
		return len(p), w.flushLocked()
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.delay, func() { _ = w.Flush() })
	} else if len(w.buf) == len(p) {
		w.timer.Reset(w.delay)
	}
	return len(p), nil
}

// Flush writes out what the Writer holds.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

// flushLocked writes the buffer out and empties it, keeping its memory
// unless a burst made it larger than twice the Writer's size.
func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	_, err := w.out.Write(w.buf)
	if cap(w.buf) > 2*w.size {
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

// Close writes out what the Writer holds; later writes go straight to
// out. It may be called more than once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.flushLocked()
	w.closed = true
	return err
}

// Handler returns h, which must write to w, with every record at level or
// above written out at once: a warning or an error shows when it happens.
func (w *Writer) Handler(h slog.Handler, level slog.Level) slog.Handler {
	return &flushingHandler{Handler: h, w: w, level: level}
}

// flushingHandler flushes its Writer after each record at its level or
// above.
type flushingHandler struct {
	slog.Handler
	w     *Writer
	level slog.Level
}

// Handle passes r on, then flushes when r's level asks for it.
func (h *flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= h.level {
		if ferr := h.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

// WithAttrs returns the handler with attrs, still flushing.
func (h *flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &flushingHandler{Handler: h.Handler.WithAttrs(attrs), w: h.w, level: h.level}
}

// WithGroup returns the handler with the group name, still flushing.
func (h *flushingHandler) WithGroup(name string) slog.Handler {
	return &flushingHandler{Handler: h.Handler.WithGroup(name), w: h.w, level: h.level}
}
