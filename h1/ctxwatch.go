package h1

import (
	"context"
	"time"
)

// A client exchange's context watch. An exchange whose context ends must
// end too: its connection is closed, which ends a read or write under way.
// context.AfterFunc does that, but costs every exchange an allocation or
// three, a lock of the context's parent and a child in its map, and it asks
// the context for its Done channel, which makes one (the gateway's call
// contexts and its upstream and REST deadlines, internal/lazyctx's, make
// their context, its parent's child and the deadline's timer only then).
// Most exchanges end within a millisecond. So, as the server's disconnect watch does
// (watch.go), an exchange is only listed when it starts; one goroutine per
// transport (watchLoop) looks at the list every watchAfter while there
// are exchanges, for watchLinger after, and watches with context.AfterFunc
// those that began before its previous look, 5 to 10 ms into their run. A
// context that has already ended when the exchange starts closes the
// connection at once; one that ends in an exchange's first milliseconds
// closes it at the next look.

// ctxWatch is the context watch of the exchange on a connection: one at a
// time, so the connection holds it. It is listed from the exchange's start
// until it is watched or stopped, whichever comes first: the list holds
// only exchanges younger than two looks, so a long one (an event stream
// held open) does not keep the loop looking.
type ctxWatch struct {
	c          *conn // the connection that holds it (newConn)
	ctx        context.Context
	seq        uint64      // the exchange's number on the connection
	gen        uint64      // the transport's look count when the exchange began
	stop       func() bool // context.AfterFunc's, once watched, until stopped
	prev, next *ctxWatch   // in the transport's list while listed
	listed     bool
}

// watchTicket ends one exchange's watch.
type watchTicket struct {
	t   *Transport
	w   *ctxWatch
	seq uint64
}

// watch starts the watch of the exchange on c under ctx. A context that
// has already ended closes c at once (the exchange then fails with its
// error).
func (t *Transport) watch(ctx context.Context, c *conn) watchTicket {
	w := &c.watch
	ended := ctx.Err() != nil
	if ended {
		c.nc.Close()
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	w.seq++
	w.ctx, w.stop = nil, nil
	if ended {
		return watchTicket{t, w, w.seq} // not listed: stops as one that fired
	}
	w.ctx, w.gen = ctx, t.looks
	t.list(w)
	if !t.watching {
		t.watching = true
		t.watchStarts++
		go t.watchLoop()
	}
	return watchTicket{t, w, w.seq}
}

// stop ends the watch, reporting whether its context had not closed the
// connection: false once the context's end has closed it or is closing it.
// Later calls report false.
func (k watchTicket) stop() bool {
	k.t.wmu.Lock()
	w := k.w
	if w.seq != k.seq {
		k.t.wmu.Unlock()
		return false // an earlier exchange's ticket
	}
	listed, stop := w.listed, w.stop
	if listed {
		k.t.unlist(w)
	}
	w.ctx, w.stop = nil, nil
	k.t.wmu.Unlock()
	switch {
	case listed:
		return true // never watched
	case stop != nil:
		return stop()
	}
	return false // stopped before, or its context had ended at its start
}

// list adds w to the transport's list; t.wmu is held.
func (t *Transport) list(w *ctxWatch) {
	w.prev, w.next, w.listed = nil, t.watched, true
	if t.watched != nil {
		t.watched.prev = w
	}
	t.watched = w
}

// unlist takes w out of the transport's list; t.wmu is held.
func (t *Transport) unlist(w *ctxWatch) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		t.watched = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.listed = nil, nil, false
}

// watchLoop watches the contexts of the exchanges that began before its
// previous look, looking every watchAfter until its looks have found no
// exchange listed for watchLinger; watch starts it again with the next
// exchange.
func (t *Transport) watchLoop() {
	tick := time.NewTicker(watchAfter)
	defer tick.Stop()
	idle := 0 // looks in a row that found no exchange
	for range tick.C {
		if !t.watchDue(&idle) {
			return
		}
	}
}

// watchDue is one look of watchLoop: it watches the listed exchanges that
// began before the previous look, and takes them off the list; it counts
// in idle the looks in a row that found none listed, and reports whether
// the loop goes on. When it does not, the loop ends under the lock that
// watch starts it under.
func (t *Transport) watchDue(idle *int) bool {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.looks++
	if t.watched == nil {
		*idle++
	} else {
		*idle = 0
	}
	for w, next := t.watched, (*ctxWatch)(nil); w != nil; w = next {
		next = w.next
		if w.gen+1 < t.looks {
			w.stop = context.AfterFunc(w.ctx, w.c.closer)
			t.unlist(w)
			t.afterFuncs++
		}
	}
	t.watching = time.Duration(*idle)*watchAfter < watchLinger
	if !t.watching {
		t.watchEnds++
	}
	return t.watching
}
