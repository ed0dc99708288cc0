package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// loadEvent is one line of `load --events`: a failed attempt ("error"), a
// session the gateway no longer knew ("lost_session"), a call that
// succeeded after failed attempts ("retried") or one that failed for good
// ("failed"). Attempt is the attempt's number (from 1) for an error, and
// how many were made for retried and failed.
type loadEvent struct {
	At         time.Time `json:"at"`
	Event      string    `json:"event"`
	Session    int       `json:"session"`
	Key        string    `json:"key,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	Class      string    `json:"class,omitempty"`
	Error      string    `json:"error,omitempty"`
	FirstError time.Time `json:"first_error,omitzero"`
}

// loadEvents writes events as JSON lines to a file; a nil *loadEvents
// writes nothing.
type loadEvents struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	err error
}

// openEvents creates the events file, or returns nil for no path.
func openEvents(path string) (*loadEvents, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	return &loadEvents{f: f, w: bufio.NewWriter(f)}, nil
}

// write appends one event, stamped now.
func (e *loadEvents) write(ev loadEvent) {
	if e == nil {
		return
	}
	ev.At = time.Now()
	b, _ := json.Marshal(ev)
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.w.Write(append(b, '\n')); err != nil && e.err == nil {
		e.err = err
	}
}

// close flushes and closes the file and returns the first write error.
func (e *loadEvents) close() error {
	if e == nil {
		return nil
	}
	err := e.w.Flush()
	if cerr := e.f.Close(); err == nil {
		err = cerr
	}
	if e.err != nil {
		err = e.err
	}
	if err != nil {
		return fmt.Errorf("--events: %w", err)
	}
	return nil
}
