package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// event is one call of a Subscribe callback.
type event struct {
	topic, payload string
}

// mustSubscribe opens a Broker on dsn and subscribes it until the test
// ends, returning its events; it waits for the first, which says that the
// broker listens.
func mustSubscribe(t *testing.T, dsn string) (*postgres.Broker, <-chan event) {
	t.Helper()
	b := mustBroker(t, dsn)
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan event, 16)
	done := make(chan error, 1)
	go func() {
		done <- b.Subscribe(ctx, func(topic string, payload []byte) { events <- event{topic, string(payload)} })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Subscribe returned %v, want context.Canceled", err)
		}
	})
	mustEvent(t, events, event{})
	return b, events
}

func mustBroker(t *testing.T, dsn string) *postgres.Broker {
	t.Helper()
	b, err := postgres.OpenBroker(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// mustEvent waits for the next event, which must be want.
func mustEvent(t *testing.T, events <-chan event, want event) {
	t.Helper()
	select {
	case got := <-events:
		if got != want {
			t.Fatalf("event = %+v, want %+v", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no event %+v within 10s", want)
	}
}

func TestBrokerPublishSubscribe(t *testing.T) {
	dsn := pgtest.Database(t, pgtest.Admin(t))
	_, events := mustSubscribe(t, dsn)
	pub := mustBroker(t, dsn)
	ctx := context.Background()
	for _, e := range []event{{"reply:ch_1", "rep_a"}, {"inbox:weather", ""}, {"reply:ünïcode \"quoted\"", "x\x00y"}} {
		if err := pub.Publish(ctx, e.topic, []byte(e.payload)); err != nil {
			t.Fatal(err)
		}
		mustEvent(t, events, e)
	}
	if err := pub.Publish(ctx, "big", []byte(strings.Repeat("x", 8000))); err == nil {
		t.Error("Publish of 8000 bytes succeeded; want an error")
	}
}

// TestBrokerPublishTogether: notifications published while one is being
// sent go in one statement, each sent once however often it was
// published, and every listener gets each of them.
func TestBrokerPublishTogether(t *testing.T) {
	dsn := pgtest.Database(t, pgtest.Admin(t))
	_, events := mustSubscribe(t, dsn)
	pub := mustBroker(t, dsn)
	sent := []event{{"reply:ch_1", "rep_a"}, {"inbox:weather", "rep_a"}, {"reply:ch_1", "rep_a"}, {"reply:ch_2", "rep_b"}}
	postgres.HoldPublishing(pub, len(sent))
	errs := make([]error, len(sent))
	var wg sync.WaitGroup
	for i, e := range sent {
		wg.Go(func() { errs[i] = pub.Publish(context.Background(), e.topic, []byte(e.payload)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Publish %+v: %v", sent[i], err)
		}
	}
	if n := postgres.PublishBatches(pub); n != 1 {
		t.Errorf("%d statements, want 1 for the four notifications", n)
	}
	got := map[event]int{}
	for range 3 {
		select {
		case e := <-events:
			got[e]++
		case <-time.After(10 * time.Second):
			t.Fatalf("got %v within 10s, want three distinct events", got)
		}
	}
	for _, e := range sent {
		if got[e] != 1 {
			t.Errorf("event %+v arrived %d times, want once", e, got[e])
		}
	}
}

// TestBrokerReconnect kills the listening connection: the broker must
// reconnect, report it with an event of topic "", and deliver again.
func TestBrokerReconnect(t *testing.T) {
	admin := pgtest.Admin(t)
	dsn := pgtest.Database(t, admin)
	b, events := mustSubscribe(t, dsn)
	for round := range 2 {
		if n := pgtest.TerminateListeners(t, admin, dsn); n != 1 {
			t.Fatalf("terminated %d listeners, want 1", n)
		}
		mustEvent(t, events, event{})
		if err := b.Publish(context.Background(), "after", []byte{byte('0' + round)}); err != nil {
			t.Fatal(err)
		}
		mustEvent(t, events, event{"after", string(rune('0' + round))})
	}
}
