package bus_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// replica is one gateway process on a shared PostgreSQL database: its own
// store, broker and bus.
type replica struct {
	store  *sqlstore.Store
	broker *watchedBroker
	bus    *bus.Bus
}

// watchedBroker is a postgres.Broker that reports each (re)connection, so
// that tests know when it listens.
type watchedBroker struct {
	*postgres.Broker
	connected chan struct{}
	count     atomic.Int32
}

// Subscribe passes events on, and signals connected on each topic "".
func (w *watchedBroker) Subscribe(ctx context.Context, fn func(topic string, payload []byte)) error {
	return w.Broker.Subscribe(ctx, func(topic string, payload []byte) {
		fn(topic, payload)
		if topic == "" {
			w.count.Add(1)
			w.connected <- struct{}{}
		}
	})
}

// mustReplicas starts n replicas on a new PostgreSQL database holding the
// fixture, each listening when it is returned.
func mustReplicas(tb testing.TB, n int) (*sql.DB, string, []*replica) {
	tb.Helper()
	admin := pgtest.Admin(tb)
	dsn := pgtest.Database(tb, admin)
	var out []*replica
	for i := range n {
		s, err := postgres.Open(context.Background(), dsn)
		must(tb, err)
		tb.Cleanup(func() { _ = s.Close() })
		if i == 0 {
			mustFixture(tb, s)
		}
		pb, err := postgres.OpenBroker(context.Background(), dsn, nil)
		must(tb, err)
		tb.Cleanup(func() { _ = pb.Close() })
		w := &watchedBroker{Broker: pb, connected: make(chan struct{}, 8)}
		r := &replica{store: s, broker: w, bus: mustBus(tb, s, w)}
		mustSignal(tb, w.connected)
		out = append(out, r)
	}
	return admin, dsn, out
}

// TestReplicas waits on one replica for a reply posted through another,
// and signals an inbox across them.
func TestReplicas(t *testing.T) {
	_, _, rs := mustReplicas(t, 2)
	a, b := rs[0].bus, rs[1].bus
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inbox := b.Inbox(ctx, "weather")
	chat := post(t, a, mcpgate.MessageChat, "", "hi")
	mustSignal(t, inbox)
	results := await(context.Background(), a, chat.ID)
	want := deltas(50)
	for _, d := range want {
		post(t, b, mcpgate.MessageReplyDelta, chat.ID, d)
	}
	post(t, b, mcpgate.MessageReply, chat.ID, "hello from b")
	mustReply(t, results, "hello from b", want)

	release := b.MarkOnline(ctx, "weather", "chat")
	mustOnline(t, a, "weather", "chat", true)
	release()
	mustOnline(t, a, "weather", "chat", false)
}

// TestReplicasBrokerReconnect has a waiter miss a notification while its
// replica's listening connection is down: once the waiter has read the
// delta posted before it started (so no signal is pending), the reply is
// stored without a signal and the connection killed; on reconnecting, the
// bus must wake the waiter, which finds the reply.
func TestReplicasBrokerReconnect(t *testing.T) {
	admin, dsn, rs := mustReplicas(t, 1)
	r := rs[0]
	chat := post(t, r.bus, mcpgate.MessageChat, "", "hi")
	post(t, r.bus, mcpgate.MessageReplyDelta, chat.ID, "thinking")
	sawDelta := make(chan struct{}, 1)
	results := make(chan awaited, 1)
	go func() {
		var a awaited
		a.reply, a.err = r.bus.Await(context.Background(), "ch-1", chat.ID, func(m *mcpgate.Message) {
			a.deltas = append(a.deltas, m.Body.Text)
			sawDelta <- struct{}{}
		})
		results <- a
	}()
	mustSignal(t, sawDelta)
	reply := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageReply, InReplyTo: chat.ID, Body: mcpgate.MessageBody{Text: "unsignalled"}}
	must(t, r.store.PostMessage(context.Background(), reply))
	pgtest.TerminateListeners(t, admin, dsn)
	mustSignal(t, r.broker.connected)
	mustReply(t, results, "unsignalled", []string{"thinking"})
	if n := r.broker.count.Load(); n != 2 {
		t.Errorf("connected %d times, want 2", n)
	}
}

// TestReplicasWatch wakes a watcher of a topic on one replica by a Signal
// on another, and not a watcher of another topic.
func TestReplicasWatch(t *testing.T) {
	_, _, rs := mustReplicas(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woken, other := rs[1].bus.Watch(ctx, "approval:apr_1"), rs[1].bus.Watch(ctx, "approval:apr_2")
	rs[0].bus.Signal(ctx, "approval:apr_1")
	mustSignal(t, woken)
	select {
	case <-other:
		t.Fatal("a watcher of another topic was woken")
	default:
	}
	cancel()
	for range woken { // closed when ctx ends
	}
}
