package logbuf

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library.
func TestImports(t *testing.T) { deptest.Check(t) }

// sink records each write it gets.
type sink struct {
	mu     sync.Mutex
	writes []string
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, string(p))
	return len(p), nil
}

// got returns the writes so far.
func (s *sink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

// TestWriterHoldsUntilFlush: lines are not written one by one; Flush
// writes them all, in order, with one write.
func TestWriterHoldsUntilFlush(t *testing.T) {
	out := &sink{}
	w := New(out, time.Hour, 1<<20)
	for i := range 3 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if got := out.got(); len(got) != 0 {
		t.Fatalf("written before a flush: %q", got)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.got(); len(got) != 1 || got[0] != "line 0\nline 1\nline 2\n" {
		t.Fatalf("after Flush: %q, want the three lines in one write", got)
	}
}

// TestWriterWritesAfterDelay: what is held is written once the delay has
// passed, with no Flush, and again for lines that come later.
func TestWriterWritesAfterDelay(t *testing.T) {
	out := &sink{}
	w := New(out, time.Millisecond, 1<<20)
	for round := 1; round <= 2; round++ {
		fmt.Fprintf(w, "round %d\n", round)
		waitWrites(t, out, round)
	}
}

// waitWrites waits up to 10 s for n writes to out.
func waitWrites(t *testing.T, out *sink, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(out.got()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes after 10 s, want %d: %q", len(out.got()), n, out.got())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWriterWritesWhenFull: a Writer that holds Size bytes writes them
// at once.
func TestWriterWritesWhenFull(t *testing.T) {
	out := &sink{}
	w := New(out, time.Hour, 10)
	w.Write([]byte("12345"))
	w.Write([]byte("67890"))
	if got := out.got(); len(got) != 1 || got[0] != "1234567890" {
		t.Fatalf("got %q, want one write of the 10 bytes", got)
	}
}

// TestWriterClose: Close writes what is held, and later writes go
// straight out.
func TestWriterClose(t *testing.T) {
	out := &sink{}
	w := New(out, time.Hour, 1<<20)
	w.Write([]byte("held\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("after\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.got(); len(got) != 2 || got[0] != "held\n" || got[1] != "after\n" {
		t.Fatalf("got %q", got)
	}
}

// TestHandlerFlushesWarnings: records below the level wait; one at the
// level is written at once, with those before it, also through a logger
// made With attributes.
func TestHandlerFlushesWarnings(t *testing.T) {
	out := &sink{}
	w := New(out, time.Hour, 1<<20)
	log := slog.New(w.Handler(slog.NewTextHandler(w, nil), slog.LevelWarn)).With("component", "test")
	log.Info("request")
	if got := out.got(); len(got) != 0 {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.Warn("slow")
	got := out.got()
	if len(got) != 1 || !strings.Contains(got[0], "msg=request") || !strings.Contains(got[0], "msg=slow component=test") {
		t.Fatalf("after a warning: %q, want both lines in one write", got)
	}
}

// TestWriterConcurrent: lines written at once from many goroutines all
// arrive whole.
func TestWriterConcurrent(t *testing.T) {
	var out bytes.Buffer
	w := New(&syncWriter{w: &out}, time.Millisecond, 256)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(w, "goroutine %d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(l, "goroutine %d line %d", &g, &i); err != nil {
			t.Fatalf("a torn line: %q", l)
		}
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
