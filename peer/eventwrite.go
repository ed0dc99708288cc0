package peer

import (
	"context"
	"time"

	"github.com/mcpgate/mcpgate"
)

// writer is the EventLog's goroutine's state: the floors it has pruned to,
// so that a session's events are pruned only when its floor moved.
type writer struct {
	l      *EventLog
	pruned map[string]int64 // by session
	drops  int64            // dropped events already reported
}

// run writes batches as events arrive, and sweeps old events, until Close.
func (l *EventLog) run() {
	defer close(l.done)
	w := &writer{l: l, pruned: map[string]int64{}}
	sweep := time.NewTicker(sweepEvery)
	defer sweep.Stop()
	for {
		select {
		case first := <-l.queue:
			w.write(context.Background(), w.take(first))
		case <-sweep.C:
			w.sweep()
		case <-l.stop:
			w.drain()
			return
		}
	}
}

// take returns first and what else is queued, up to a batch.
func (w *writer) take(first logged) []logged {
	batch := []logged{first}
	for len(batch) < w.l.batch {
		select {
		case m := <-w.l.queue:
			batch = append(batch, m)
		default:
			return batch
		}
	}
	return batch
}

// write stores a batch with the floors of its sessions that moved.
func (w *writer) write(ctx context.Context, batch []logged) {
	events := make([]*mcpgate.StreamEvent, len(batch))
	latest := map[string]logged{}
	for i, m := range batch {
		events[i] = m.ev
		latest[m.ev.Session] = m
	}
	var floors []mcpgate.StreamFloor
	for session, m := range latest {
		if m.floor > w.pruned[session] {
			floors = append(floors, mcpgate.StreamFloor{Replica: m.ev.Replica, Session: session, Pos: m.floor})
		}
	}
	if err := w.l.store.PutStreamEvents(ctx, events, floors); err != nil {
		w.l.logger.Warn("peer: write stream events", "events", len(events), "err", err)
		return
	}
	for _, f := range floors {
		w.pruned[f.Session] = f.Pos
	}
}

// sweep deletes events older than the log keeps, forgets the floors (a
// session's next batch prunes again), and reports drops.
func (w *writer) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), sweepEvery)
	defer cancel()
	if _, err := w.l.store.DeleteStreamEvents(ctx, time.Now().Add(-w.l.keep)); err != nil {
		w.l.logger.Warn("peer: sweep stream events", "err", err)
	}
	clear(w.pruned)
	if n := w.l.dropped.Load(); n > w.drops {
		w.l.logger.Warn("peer: stream events dropped, the queue was full", "dropped", n-w.drops)
		w.drops = n
	}
}

// drain writes what is queued, within eventCloseWait.
func (w *writer) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), eventCloseWait)
	defer cancel()
	for {
		select {
		case first := <-w.l.queue:
			w.write(ctx, w.take(first))
		default:
			return
		}
	}
}
