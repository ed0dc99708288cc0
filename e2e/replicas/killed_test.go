package replicas

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// testResumeAfterKill opens the session's GET stream on replica 0 and
// reads three notifications from it, then kills replica 0 (kill -9: it
// hands nothing over) and resumes after the first notification with
// Last-Event-ID on replica 1: replica 1 replays the two that followed,
// with replica 0's ids, from the events replica 0 wrote behind its sends,
// and the stream goes on there (subscribed again: the upstream
// subscription died with replica 0). The test waits until the events are
// stored before the kill: what a kill -9 loses is the last batch being
// written (docs/architecture.md, "Many replicas").
func testResumeAfterKill(t *testing.T, e *env) {
	waitServed(t, e, "everything") // replica 0 was restarted after the handover
	s, w := watchOn(t, e, 0)
	sent := []event{w.next(t), w.next(t), w.next(t)}
	w.get.Body.Close()
	waitStored(t, e.dsn, sent[2].id)
	if err := e.Replica(0).Kill(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Replica(0).Start(); err != nil {
			t.Error(err)
		}
	})
	resumed := s.on(e, 1, "everything").send("", sent[0].id)
	defer resumed.Body.Close()
	rev := newEvents(resumed.Body)
	for _, want := range sent[1:] {
		got, ok := rev.next()
		if !ok || got.id != want.id || string(got.data) != string(want.data) {
			t.Fatalf("after replica 0 was killed, replica 1 replayed %q %q, want %q %q", got.id, got.data, want.id, want.data)
		}
	}
	// The subscription died with replica 0's upstream session: subscribed
	// again, the updates come on the resumed stream, now replica 1's.
	if r := s.on(e, 1, "everything").post(`{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"test://watched-resource"}}`); r.Error != nil {
		t.Fatalf("subscribe on replica 1: %s", r.Body)
	}
	next, ok := rev.next()
	if !ok || next.message().Method == "" || strings.HasPrefix(next.id, sent[0].id[:12]) {
		t.Fatalf("the resumed stream did not go on on replica 1: %q %q", next.id, next.data)
	}
}

// waitStored waits until the event with id is in the replicas' database.
func waitStored(t *testing.T, dsn, id string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	i := strings.LastIndexByte(id, '_')
	seq, _ := strconv.ParseInt(id[i+1:], 10, 64)
	waitUntil(t, 30*time.Second, "event "+id+" stored", func() bool {
		return storedEvents(db, id[:i], seq) > 0
	})
}

// storedEvents counts the stored events of a stream from seq on.
func storedEvents(db *sql.DB, stream string, seq int64) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int
	_ = db.QueryRowContext(ctx, `SELECT count(*) FROM stream_events WHERE stream_id = $1 AND seq >= $2`, stream, seq).Scan(&n)
	return n
}
