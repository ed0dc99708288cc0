package h1

import (
	"context"
	"sync"
	"time"
)

// watchAfter is how long a request runs, its body read, before the server
// reads its connection in the background to learn of the client's leaving
// (which cancels the request's context, as with net/http). A request that
// ends sooner pays for a timer's reset and stop, not for a goroutine, a
// read and its abort.
const watchAfter = 5 * time.Millisecond

// aLongTimeAgo is a deadline in the past: it ends a read under way.
var aLongTimeAgo = time.Unix(1, 0)

// Disconnect watch states.
const (
	watchIdle     = iota // no request to watch
	watchArmed           // the timer runs
	watchReading         // the read is under way
	watchAborting        // the read is being ended
	watchFinished        // the read ended by itself
)

// watch reads a connection in the background while its request runs.
type watch struct {
	c      *serverConn
	cancel context.CancelCauseFunc // the request's
	mu     sync.Mutex
	state  int
	gone   bool // the read failed: the client left
	timer  *time.Timer
	done   chan struct{}
}

// arm starts the timer of the request being served (whose context
// w.cancel ends); the watch reads once it fires. Nothing is watched when
// bytes of a next request are already buffered (pipelined): that read
// would find them.
func (w *watch) arm() {
	if w.c.br.Buffered() > 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state, w.gone = watchArmed, false
	if w.timer == nil {
		w.done = make(chan struct{}, 1)
		w.timer = time.AfterFunc(watchAfter, w.read)
		return
	}
	w.timer.Reset(watchAfter)
}

// read is the background read: one byte, kept for the next request if it
// comes; an error other than the abort's means the client left.
func (w *watch) read() {
	w.mu.Lock()
	if w.state != watchArmed {
		w.mu.Unlock()
		return
	}
	w.state = watchReading
	w.mu.Unlock()
	cr := &w.c.cr
	n, err := cr.nc.Read(cr.one[:])
	w.mu.Lock()
	cr.has1 = n == 1
	if err != nil && w.state != watchAborting {
		w.gone = true
		w.cancel(context.Canceled)
	}
	w.state = watchFinished
	w.mu.Unlock()
	w.done <- struct{}{}
}

// disarm stops the watch, ending its read if one is under way, and
// returns once the read has ended.
func (w *watch) disarm() {
	w.mu.Lock()
	switch w.state {
	case watchIdle:
		w.mu.Unlock()
		return
	case watchArmed:
		w.timer.Stop() // if it fired meanwhile, read sees watchIdle
		w.state = watchIdle
		w.mu.Unlock()
		return
	case watchReading:
		w.state = watchAborting
		w.c.nc.SetReadDeadline(aLongTimeAgo)
		w.mu.Unlock()
		<-w.done
		w.c.nc.SetReadDeadline(time.Time{})
	default: // watchFinished
		w.mu.Unlock()
		<-w.done
	}
	w.mu.Lock()
	w.state = watchIdle
	w.mu.Unlock()
}

// clientStayed reports whether the last watch found the client still
// there; call it after disarm.
func (w *watch) clientStayed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.gone
}
