package peer_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/peer"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/sqlite"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// noPoll makes delivery depend on wake-ups alone.
const noPoll = time.Hour

// mustPeers returns Peers over store and signals, closed when t ends.
func mustPeers(t *testing.T, store mcpgate.PeerMessageStore, signals peer.Signals, poll time.Duration) *peer.Peers {
	p := peer.New(&peer.Options{Store: store, Signals: signals, Poll: poll})
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// mustReceive waits for the next message of p and checks its body.
func mustReceive(t *testing.T, p *peer.Peers, want string) {
	t.Helper()
	select {
	case got := <-p.Messages():
		if string(got) != want {
			t.Fatalf("received %q, want %q", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%q not received", want)
	}
}

// mustNothing checks that p has received nothing more.
func mustNothing(t *testing.T, p *peer.Peers) {
	t.Helper()
	select {
	case got := <-p.Messages():
		t.Fatalf("received %q, want nothing", got)
	case <-time.After(200 * time.Millisecond):
	}
}

// mustSQLite opens a store in a temporary directory.
func mustSQLite(t *testing.T) *sqlstore.Store {
	s, err := sqlite.Open(context.Background(), t.TempDir()+"/mcpgate.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestSendTargets checks that a message reaches its recipient once, that a
// message to all reaches every other replica but not its sender, and that
// a third replica does not get what is not for it.
func TestSendTargets(t *testing.T) {
	s := mustSQLite(t)
	b := bus.New(&bus.Options{Store: s})
	t.Cleanup(func() { _ = b.Close() })
	p1, p2, p3 := mustPeers(t, s, b, noPoll), mustPeers(t, s, b, noPoll), mustPeers(t, s, b, noPoll)
	ctx := context.Background()
	if err := p1.Send(ctx, p2.Instance(), []byte("to two")); err != nil {
		t.Fatal(err)
	}
	mustReceive(t, p2, "to two")
	if err := p1.Send(ctx, "", []byte("to all")); err != nil {
		t.Fatal(err)
	}
	mustReceive(t, p2, "to all")
	mustReceive(t, p3, "to all")
	mustNothing(t, p1)
	mustNothing(t, p2)
	mustNothing(t, p3)
}

// TestPollWithoutSignal stores a message without waking anyone, as a lost
// notification would: the poll delivers it.
func TestPollWithoutSignal(t *testing.T) {
	s := mustSQLite(t)
	b := bus.New(&bus.Options{Store: s})
	t.Cleanup(func() { _ = b.Close() })
	p := mustPeers(t, s, b, 50*time.Millisecond)
	if err := s.PutPeerMessage(context.Background(), &mcpgate.PeerMessage{From: "other", To: p.Instance(), Body: []byte("unsignalled")}); err != nil {
		t.Fatal(err)
	}
	mustReceive(t, p, "unsignalled")
	mustNothing(t, p)
}

// TestReconnectCatchesUp stores a message for a replica on PostgreSQL
// without a signal and then cuts that replica's listening connection: on
// reconnecting the bus wakes every watcher, and the message is delivered
// although polling is off.
func TestReconnectCatchesUp(t *testing.T) {
	admin := pgtest.Admin(t)
	dsn := pgtest.Database(t, admin)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	broker, err := postgres.OpenBroker(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = broker.Close() })
	b := bus.New(&bus.Options{Store: s, Broker: broker})
	t.Cleanup(func() { _ = b.Close() })
	p := mustPeers(t, s, b, noPoll)
	waitListening(t, admin, dsn)
	mustNothing(t, p) // the read the first connection woke is over
	if err := s.PutPeerMessage(ctx, &mcpgate.PeerMessage{From: "other", To: p.Instance(), Body: []byte("while down")}); err != nil {
		t.Fatal(err)
	}
	mustNothing(t, p)
	for pgtest.TerminateListeners(t, admin, dsn) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	mustReceive(t, p, "while down")
}

// waitListening waits until a listening connection is open on dsn's
// database.
func waitListening(t *testing.T, admin *sql.DB, dsn string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		var n int
		err := admin.QueryRow(`SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = $2`,
			postgres.ListenerName, strings.TrimPrefix(u.Path, "/")).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no listening connection")
}
