package peer_test

import (
	"context"
	"testing"

	"github.com/mcpgate/mcpgate/peer"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// BenchmarkEventLogPostgres measures what storing one SSE event costs the
// database: b.N events of 64 sessions recorded as fast as they come, then
// Close waits until the writer stored them all (batches of whatever was
// queued, each pruning its sessions beyond 512 events).
func BenchmarkEventLogPostgres(b *testing.B) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.Database(b, pgtest.Admin(b)))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	l := peer.NewEventLog(&peer.EventLogOptions{Store: s, QueueSize: b.N + 1})
	b.ResetTimer()
	for i := range b.N {
		ev := logEvent(int64(i+1), uint64(i+1))
		ev.Session = string(rune('a' + i%64))
		l.Record(ev, max(1, int64(i+1)-512*64))
	}
	_ = l.Close()
	b.StopTimer()
	if l.Dropped() != 0 {
		b.Fatalf("dropped %d", l.Dropped())
	}
}
