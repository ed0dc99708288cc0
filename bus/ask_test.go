package bus_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
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
// it posts, it never looks the message up and reads the channel only when a
// reply wakes it: once per reply posted, not once more before the first.
func TestAsk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &countingStore{Store: mustSQLite(t)}
	b := mustBus(t, s, nil)
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
	if f, l := s.finds.Load(), s.lists.Load(); f != 0 || l != 1 {
		t.Errorf("Ask read the store %d times for the message and %d times for replies, want 0 and 1", f, l)
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
