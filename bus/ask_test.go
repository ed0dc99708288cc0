package bus_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// countingStore counts the reads a waiting call makes.
type countingStore struct {
	bus.Store
	finds, lists atomic.Int64
}

func (s *countingStore) FindMessage(ctx context.Context, id string) (*mcpgate.Message, error) {
	s.finds.Add(1)
	return s.Store.FindMessage(ctx, id)
}

func (s *countingStore) ListMessages(ctx context.Context, channelID string, after int64, limit int) ([]*mcpgate.Message, error) {
	s.lists.Add(1)
	return s.Store.ListMessages(ctx, channelID, after, limit)
}

// TestAsk: Ask posts the message, calls posted once it is stored, relays
// the deltas in order and returns the final reply. Since it listens before
// it posts, it never looks the message up; and a bus without a Broker hands
// a final reply posted through it to the waiting call, which then does not
// read the channel at all (it read once per reply posted before the
// replies were handed over).
func TestAsk(t *testing.T) {
	testAsk(t, nil, 0)
}

// TestAskBroker: with a Broker, replies may be posted on other replicas,
// so the call reads the channel when a reply wakes it: once.
func TestAskBroker(t *testing.T) {
	testAsk(t, loopBroker{}, 1)
}

// loopBroker is a Broker of one process: it delivers nothing, as a real
// one delivers nothing back to the replica that published.
type loopBroker struct{}

func (loopBroker) Publish(context.Context, string, []byte) error { return nil }

func (loopBroker) Subscribe(ctx context.Context, _ func(string, []byte)) error {
	<-ctx.Done()
	return ctx.Err()
}

// testAsk asks on a bus with broker and wants reads reads of the channel.
func testAsk(t *testing.T, broker bus.Broker, reads int64) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &countingStore{Store: mustSQLite(t)}
	b := mustBus(t, s, broker)
	m := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u1", Body: mcpgate.MessageBody{Text: "ping"}}
	var storedAtPosted atomic.Bool
	var answered sync.WaitGroup
	posted := func() {
		got, err := s.Store.FindMessage(ctx, m.ID)
		storedAtPosted.Store(err == nil && got.Seq == m.Seq)
		answered.Go(func() { answer(t, b, m, mcpgate.MessageReply, "pong") })
	}
	var deltas []string
	reply, err := b.Ask(ctx, m, posted, func(d *mcpgate.Message) { deltas = append(deltas, d.Body.Text) })
	answered.Wait()
	must(t, err)
	if reply.Body.Text != "pong" || reply.InReplyTo != m.ID || len(deltas) != 0 {
		t.Errorf("Ask = %q to %s after %q", reply.Body.Text, reply.InReplyTo, deltas)
	}
	if !storedAtPosted.Load() {
		t.Error("posted was called before the message was stored")
	}
	if f, l := s.finds.Load(), s.lists.Load(); f != 0 || l != reads {
		t.Errorf("Ask read the store %d times for the message and %d times for replies, want 0 and %d", f, l, reads)
	}
	stored, err := s.Store.FindReply(ctx, m.ID)
	must(t, err)
	if diff := cmp.Diff(stored, reply); diff != "" {
		t.Errorf("Ask's reply differs from the stored one (-stored +got):\n%s", diff)
	}
}

// listCountingStore is the SQLite store, with its handover of replies,
// counting its reads of a channel.
type listCountingStore struct {
	*sqlstore.Store
	lists atomic.Int64
}

func (s *listCountingStore) ListMessages(ctx context.Context, channelID string, after int64, limit int) ([]*mcpgate.Message, error) {
	s.lists.Add(1)
	return s.Store.ListMessages(ctx, channelID, after, limit)
}

// TestAskNotWokenByOthers: on a bus without a Broker, a call waiting on a
// channel is not woken by the reply to another call's message there (a
// session's next call, most often): it does not read the store for it,
// and gets its own reply handed over, with no read either; whether the
// store takes replies handed over before they are stored or not.
func TestAskNotWokenByOthers(t *testing.T) {
	t.Run("handing", func(t *testing.T) {
		s := &listCountingStore{Store: mustSQLite(t)}
		testAskNotWokenByOthers(t, s, &s.lists)
	})
	t.Run("plain", func(t *testing.T) {
		s := &countingStore{Store: mustSQLite(t)} // hides the handover
		testAskNotWokenByOthers(t, s, &s.lists)
	})
}

// testAskNotWokenByOthers is TestAskNotWokenByOthers on s, whose reads of
// a channel lists counts.
func testAskNotWokenByOthers(t *testing.T, s bus.Store, lists *atomic.Int64) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := mustBus(t, s, nil)
	waiting, first := make(chan *mcpgate.Message), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		m := chat("second")
		reply, err := b.Ask(ctx, m, func() { waiting <- m }, nil)
		if err != nil || reply.Body.Text != "pong to second" {
			t.Errorf("the waiting call's Ask = %v, %v", reply, err)
		}
	})
	second := <-waiting
	m := chat("first")
	reply, err := b.Ask(ctx, m, func() { go func() { answer(t, b, m, mcpgate.MessageReply, "pong to first"); close(first) }() }, nil)
	must(t, err)
	<-first // its statements ran: the channel's waiters were woken
	// A waiting call that was woken reads at once; give it the time to.
	for end := time.Now().Add(200 * time.Millisecond); lists.Load() == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if reply.Body.Text != "pong to first" || lists.Load() != 0 {
		t.Errorf("Ask = %q, after %d reads of the channel, want none", reply.Body.Text, lists.Load())
	}
	answer(t, b, second, mcpgate.MessageReply, "pong to second")
	wg.Wait()
	if n := lists.Load(); n != 0 {
		t.Errorf("the calls read the channel %d times, want none", n)
	}
}

// TestAskHandedBody: a reply handed over in process reads as the stored
// one does: its raw JSON data compacted, its empty lists dropped.
func TestAskHandedBody(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := mustSQLite(t)
	b := mustBus(t, s, nil)
	m := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u1"}
	var answered sync.WaitGroup
	posted := func() {
		answered.Go(func() {
			r := &mcpgate.Message{ChannelID: m.ChannelID, Type: mcpgate.MessageReply, InReplyTo: m.ID, Sender: "agent:weather",
				Body: mcpgate.MessageBody{Data: json.RawMessage(`{ "a" : [1, 2] }`), Parts: []mcpgate.Content{}}}
			must(t, b.Post(context.Background(), r))
		})
	}
	reply, err := b.Ask(ctx, m, posted, nil)
	must(t, err)
	answered.Wait()
	stored, err := s.FindReply(ctx, m.ID)
	must(t, err)
	if diff := cmp.Diff(stored, reply); diff != "" || string(reply.Body.Data) != `{"a":[1,2]}` {
		t.Errorf("Ask's reply differs from the stored one (-stored +got):\n%s", diff)
	}
}

// TestAskDeltasRead: a call to whose message a delta was posted reads the
// channel for its final reply, even though it was handed over, so that
// every delta reaches onDelta before the reply returns.
func TestAskDeltasRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &countingStore{Store: mustSQLite(t)}
	b := mustBus(t, s, nil)
	m := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u1"}
	var got []string
	reply, err := b.Ask(ctx, m, func() {
		answer(t, b, m, mcpgate.MessageReplyDelta, "half")
		answer(t, b, m, mcpgate.MessageReply, "done")
	}, func(d *mcpgate.Message) { got = append(got, d.Body.Text) })
	must(t, err)
	if reply.Body.Text != "done" || len(got) != 1 || got[0] != "half" || s.lists.Load() == 0 {
		t.Errorf("Ask = %q after %q with %d reads", reply.Body.Text, got, s.lists.Load())
	}
}

// TestAskDeltas: deltas posted before the reply reach onDelta in order,
// each once, however the wakes coalesce.
func TestAskDeltas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := mustBus(t, mustSQLite(t), nil)
	m := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u1"}
	want := deltas(5)
	posted := func() {
		go func() {
			for _, d := range want {
				answer(t, b, m, mcpgate.MessageReplyDelta, d)
			}
			answer(t, b, m, mcpgate.MessageReply, "done")
		}()
	}
	var got []string
	reply, err := b.Ask(ctx, m, posted, func(d *mcpgate.Message) { got = append(got, d.Body.Text) })
	must(t, err)
	if reply.Body.Text != "done" {
		t.Errorf("reply %q", reply.Body.Text)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
}

// TestAskEnds: a failed post is Ask's error, and posted is not called; a
// wait without a reply ends with ctx.
func TestAskEnds(t *testing.T) {
	b := mustBus(t, mustSQLite(t), nil)
	called := false
	_, err := b.Ask(context.Background(), &mcpgate.Message{ChannelID: "ch-missing", Type: mcpgate.MessageChat}, func() { called = true }, nil)
	if mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND || called {
		t.Errorf("Ask on a missing channel = %v (posted called: %v), want ENOTFOUND", err, called)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = b.Ask(ctx, &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat}, nil, nil)
	if err != context.DeadlineExceeded {
		t.Errorf("Ask without a reply = %v, want the context's end", err)
	}
}

// answer posts a message of type typ in reply to m, from any goroutine.
func answer(t *testing.T, b *bus.Bus, m *mcpgate.Message, typ mcpgate.MessageType, text string) {
	r := &mcpgate.Message{ChannelID: m.ChannelID, Type: typ, InReplyTo: m.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: text}}
	if err := b.Post(context.Background(), r); err != nil {
		t.Error(err)
	}
}
