package peer_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/peer"
)

// logEvent returns event seq of stream "st1" of session s1 at position pos.
func logEvent(pos int64, seq uint64) *mcpgate.StreamEvent {
	return &mcpgate.StreamEvent{Replica: "r1", Pos: pos, Session: "s1", Stream: "st1", Seq: seq, Get: true,
		Wire: fmt.Appendf(nil, "id: st1_%d\ndata: {}\n\n", seq)}
}

// TestEventLogWritesAndPrunes checks that recorded events are stored by
// Close at the latest, and that a session's events before the floor its
// last event carried are gone.
func TestEventLogWritesAndPrunes(t *testing.T) {
	store := mustSQLite(t)
	l := peer.NewEventLog(&peer.EventLogOptions{Store: store, BatchSize: 3})
	for i := int64(1); i <= 10; i++ {
		l.Record(logEvent(i, uint64(i)), max(1, i-3)) // the replica keeps 4
	}
	_ = l.Close()
	evs, err := l.Events(context.Background(), "s1", "st1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, ev := range evs {
		seqs = append(seqs, ev.Seq)
	}
	if len(seqs) == 0 || seqs[len(seqs)-1] != 10 || seqs[0] < 4 || len(seqs) > 7 {
		t.Errorf("stored %v, want the last events up to 10, at most 3 below the floor 7", seqs)
	}
	if l.Dropped() != 0 {
		t.Errorf("dropped %d", l.Dropped())
	}
}

// TestEventLogDropsWhenFull checks that Record never blocks: beyond the
// queue, events are dropped and counted.
func TestEventLogDropsWhenFull(t *testing.T) {
	store := mustSQLite(t)
	l := peer.NewEventLog(&peer.EventLogOptions{Store: store, QueueSize: 1})
	defer l.Close()
	tx, held := make(chan struct{}), make(chan struct{})
	go func() { // hold SQLite's one writer so that the queue fills
		_ = store.Tx(context.Background(), func(mcpgate.Store) error { close(held); <-tx; return nil })
	}()
	<-held
	for i := int64(1); i <= 100; i++ {
		l.Record(logEvent(i, uint64(i)), 1)
	}
	close(tx)
	if l.Dropped() == 0 {
		t.Error("no event dropped with a queue of 1 and 100 events")
	}
}
