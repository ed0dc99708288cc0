package h1

import (
	"context"
	"sync"
	"time"
)

// watchAfter is how long a request runs, its body read, before the server
// reads its connection in the background to learn of the client's leaving
// (which cancels the request's context, as with net/http). One goroutine
// per server (watchLoop) looks at the requests being served every
// watchAfter while there are any (and for watchLinger after), and starts
// the reads of those armed since its previous look, so that a request
// runs 5 to 10 ms before it is watched. A request that ends sooner pays
// for a lock and a clock read: no goroutine, read or abort, and no timer
// of its own (a timer set per request wakes an idle thread to watch it, a
// futex call on the request's path).
const watchAfter = 5 * time.Millisecond

// watchLinger is how long watchLoop goes on looking once no request is
// being served. Starting the loop is a goroutine made runnable, which
// wakes an idle thread (a futex call) on the path of the request that
// starts it; ending it at the first idle look did that every few requests
// when they came a few milliseconds apart. A server left idle longer than
// this makes no wake-ups.
const watchLinger = time.Second

// aLongTimeAgo is a deadline in the past: it ends a read under way.
var aLongTimeAgo = time.Unix(1, 0)

// Disconnect watch states.
const (
	watchIdle     = iota // no request to watch
	watchArmed           // the request's body is read: watchLoop may start the read
	watchReading         // the read is under way
	watchAborting        // the read is being ended
	watchFinished        // the read ended by itself
)

// watch reads a connection in the background while its request runs.
type watch struct {
	c       *serverConn
	cancel  context.CancelCauseFunc // the request's
	mu      sync.Mutex
	state   int
	gone    bool      // the read failed: the client left
	armedAt time.Time // when the state became watchArmed
	done    chan struct{}
}

// arm marks the request being served (whose context w.cancel ends) as
// one to watch once it has run watchAfter. Nothing is watched when bytes
// of a next request are already buffered (pipelined): that read would
// find them.
func (w *watch) arm() {
	if w.c.br.Buffered() > 0 {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state, w.gone, w.armedAt = watchArmed, false, now
	if w.done == nil {
		w.done = make(chan struct{}, 1)
	}
}

// start starts the background read when the request was armed before
// since; watchLoop calls it.
func (w *watch) start(since time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != watchArmed || w.armedAt.After(since) {
		return
	}
	w.state = watchReading
	w.c.nc.SetReadDeadline(time.Time{}) // the idle one may still be set
	go w.read()
}

// read is the background read: one byte, kept for the next request if it
// comes; an error other than the abort's means the client left.
func (w *watch) read() {
	cr := &w.c.cr
	n, err := cr.r.Read(cr.one[:])
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
	w.c.readBy = time.Time{} // the read left none
}

// clientStayed reports whether the last watch found the client still
// there; call it after disarm.
func (w *watch) clientStayed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.gone
}

// watchLoop starts the background reads of the requests that have run
// watchAfter, looking every watchAfter until the looks have found no
// request being served for watchLinger, or the server shuts down;
// setActive starts it again with the next request.
func (s *Server) watchLoop() {
	t := time.NewTicker(watchAfter)
	defer t.Stop()
	idle := 0 // looks in a row that found no request
	for now := range t.C {
		if !s.startWatches(now.Add(-watchAfter), &idle) {
			return
		}
	}
}

// startWatches starts the reads of the requests armed before since,
// counts in idle the looks in a row that found no request being served,
// and reports whether watchLoop goes on: while requests are served, and
// for watchLinger after unless the server is shutting down. When it does
// not, the loop ends under the same lock as setActive's check, so that a
// request that becomes active meanwhile starts it again.
func (s *Server) startWatches(since time.Time, idle *int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	busy := false
	for c, active := range s.conns {
		if active {
			busy = true
			c.w.start(since)
		}
	}
	if busy {
		*idle = 0
	} else {
		*idle++
	}
	s.watching = busy || !s.down.Load() && time.Duration(*idle)*watchAfter < watchLinger
	if !s.watching {
		s.watchEnds++
	}
	return s.watching
}
