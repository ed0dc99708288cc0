package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// chat returns a chat_message of the fixture's channel.
func chat(text string) *mcpgate.Message {
	return &mcpgate.Message{ChannelID: "ch-1", AgentID: "weather", Skill: "chat", Type: mcpgate.MessageChat, Sender: "user:u", Body: mcpgate.MessageBody{Text: text}}
}

// A message posted while a stream of its inbox is offered on this replica
// is handed to that stream, stored delivered to it: no stream can claim
// it, and no inbox signal is sent. A stream not offered yet (Idle not
// called: it is resuming) gets nothing handed, and the post signals the
// inbox as before.
func TestHandoff(t *testing.T) {
	ctx := context.Background()
	s := mustSQLite(t)
	b := mustBus(t, s, nil)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	wake := b.Inbox(wctx, "weather")
	h := b.Handoff(mcpgate.Inbox{AgentID: "weather", Skill: "chat", Visibility: time.Minute})
	defer h.Close()

	h.Idle()
	m := chat("one")
	must(t, b.Post(ctx, m))
	select {
	case <-h.Ready():
	case <-time.After(testTimeout):
		t.Fatal("nothing handed over")
	}
	if got := h.Take(); len(got) != 1 || got[0] != m {
		t.Fatalf("handed %v, want the message posted", got)
	}
	select {
	case <-wake:
		t.Error("a handed message signalled the inbox")
	default:
	}
	claimed, err := s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 10)
	must(t, err)
	if len(claimed) != 0 {
		t.Errorf("claimed %d messages, want none: the handed one is delivered", len(claimed))
	}

	h.Close()
	resuming := b.Handoff(mcpgate.Inbox{AgentID: "weather", Skill: "chat", Visibility: time.Minute})
	defer resuming.Close()
	busy := chat("two")
	must(t, b.Post(ctx, busy))
	select {
	case <-wake:
	case <-time.After(testTimeout):
		t.Fatal("a message not handed over did not signal the inbox")
	}
	if got := resuming.Take(); len(got) != 0 {
		t.Errorf("handed %d messages to a stream not offered", len(got))
	}
	claimed, err = s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 10)
	must(t, err)
	if len(claimed) != 1 || claimed[0].ID != busy.ID {
		t.Errorf("claimed %v, want the message posted while the stream was busy", claimed)
	}
}

// A message handed to a stream that closes before taking it is returned
// by Close, still delivered to it, for the stream to release; one posted
// after Close is not handed over, and a stream of another skill is not
// offered the message.
func TestHandoffClose(t *testing.T) {
	ctx := context.Background()
	s := mustSQLite(t)
	b := mustBus(t, s, nil)
	other := b.Handoff(mcpgate.Inbox{AgentID: "weather", Skill: "search", Visibility: time.Minute})
	defer other.Close()
	other.Idle()
	h := b.Handoff(mcpgate.Inbox{AgentID: "weather", Visibility: time.Minute})
	h.Idle()
	m := chat("one")
	must(t, b.Post(ctx, m))
	if got := h.Close(); len(got) != 1 || got[0].ID != m.ID {
		t.Fatalf("Close returned %v, want the message handed over", got)
	}
	if got := other.Take(); len(got) != 0 {
		t.Errorf("a stream of another skill was handed %d messages", len(got))
	}
	h.Idle()
	late := chat("two")
	must(t, b.Post(ctx, late))
	claimed, err := s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 10)
	must(t, err)
	if len(claimed) != 1 || claimed[0].ID != late.ID {
		t.Errorf("claimed %v, want only the message posted after Close", claimed)
	}
}

// Messages posted one after another while the stream has not taken the
// first are all handed over, and Take returns them in seq order.
func TestHandoffWhileSending(t *testing.T) {
	ctx := context.Background()
	s := mustSQLite(t)
	b := mustBus(t, s, nil)
	h := b.Handoff(mcpgate.Inbox{AgentID: "weather", Visibility: time.Minute})
	defer h.Close()
	h.Idle()
	var want []string
	for _, text := range []string{"one", "two", "three"} {
		m := chat(text)
		must(t, b.Post(ctx, m))
		want = append(want, m.ID)
	}
	var got []string
	for _, m := range h.Take() {
		got = append(got, m.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("handed %v, want %v", got, want)
	}
}

// A bus with NoHandoff hands nothing over: the message is stored
// undelivered, and claimable.
func TestNoHandoff(t *testing.T) {
	ctx := context.Background()
	s := mustSQLite(t)
	b := bus.New(&bus.Options{Store: s, NoHandoff: true})
	defer b.Close()
	h := b.Handoff(mcpgate.Inbox{AgentID: "weather", Visibility: time.Minute})
	defer h.Close()
	h.Idle()
	m := chat("one")
	must(t, b.Post(ctx, m))
	if got := h.Take(); len(got) != 0 {
		t.Errorf("handed %d messages with NoHandoff", len(got))
	}
	claimed, err := s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 10)
	must(t, err)
	if len(claimed) != 1 || claimed[0].ID != m.ID {
		t.Errorf("claimed %v, want the message posted", claimed)
	}
}

// TestHandoffAcked: the agent's streams on this replica learn of the
// messages acknowledged here, by a final reply or a cancel posted through
// the bus, once each; a delta acknowledges nothing.
func TestHandoffAcked(t *testing.T) {
	ctx := context.Background()
	b := mustBus(t, mustSQLite(t), nil)
	h := b.Handoff(mcpgate.Inbox{AgentID: "weather", Visibility: time.Minute})
	defer h.Close()
	answered, withdrawn := chat("one"), chat("two")
	must(t, b.Post(ctx, answered))
	must(t, b.Post(ctx, withdrawn))
	reply := func(m *mcpgate.Message, typ mcpgate.MessageType) {
		must(t, b.Post(ctx, &mcpgate.Message{ChannelID: "ch-1", Type: typ, InReplyTo: m.ID, Sender: "agent:weather"}))
	}
	reply(answered, mcpgate.MessageReplyDelta)
	if got := h.Acked(); len(got) != 0 {
		t.Errorf("after a delta, Acked = %v, want none", got)
	}
	reply(answered, mcpgate.MessageReply)
	reply(withdrawn, mcpgate.MessageCancel)
	if got := h.Acked(); len(got) != 2 || got[0] != answered.ID || got[1] != withdrawn.ID {
		t.Errorf("Acked = %v, want %s and %s", got, answered.ID, withdrawn.ID)
	}
	if got := h.Acked(); len(got) != 0 {
		t.Errorf("Acked again = %v, want none", got)
	}
}

// losingStore hands its test each message it stores through PostHanded,
// with the function that tells the bus it was lost.
type losingStore struct {
	bus.Store
	lost chan func(error)
}

func (s *losingStore) PostReplyHanded(ctx context.Context, m *mcpgate.Message, hand func()) error {
	return s.Store.(bus.HandingStore).PostReplyHanded(ctx, m, hand)
}

func (s *losingStore) PostHanded(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, lost func(error)) (bool, error) {
	delivered, err := s.PostDelivered(ctx, m, to)
	s.lost <- lost
	return delivered, err
}

// TestAskLost: a message handed to a stream before its commit, which then
// failed, ends the call waiting for its reply with the error, instead of
// leaving it to wait for a reply the store will refuse.
func TestAskLost(t *testing.T) {
	ctx := context.Background()
	s := &losingStore{Store: mustSQLite(t), lost: make(chan func(error), 1)}
	b := mustBus(t, s, nil)
	h := b.Handoff(mcpgate.Inbox{AgentID: "weather", Skill: "chat", Visibility: time.Minute})
	defer h.Close()
	h.Idle()
	errc := make(chan error, 1)
	go func() {
		_, err := b.Ask(ctx, chat("lost"), nil, nil)
		errc <- err
	}()
	select {
	case lost := <-s.lost:
		lost(errors.New("disk full"))
	case <-time.After(testTimeout):
		t.Fatal("the message was not handed over")
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("Ask returned %v, want the commit's error", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Ask still waits for the reply to a lost message")
	}
}

// firstStore hands each chat_message of Ask over first, as a
// FirstHandingStore that knows the inbox free does, and then stores it
// once its test sends what storing returns: nil to store it, or an error
// as if its statements had failed.
type firstStore struct {
	*sqlstore.Store
	store chan error
}

func (s *firstStore) PostHandedFirst(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, hand func(), lost func(error)) (bool, error) {
	m.Seq = 1 << 40 // the seq the store gives a message before its handover
	hand()
	if err := <-s.store; err != nil {
		return true, err
	}
	return s.Store.PostHanded(ctx, m, to, lost)
}

// TestAskHandedFirst: the chat_message of Ask reaches the offered stream
// while its statements wait, and the call then gets its reply as usual.
// When the statements fail after the handover, Ask returns their error.
func TestAskHandedFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &firstStore{Store: mustSQLite(t), store: make(chan error)}
	b := mustBus(t, s, nil)
	h := b.Handoff(mcpgate.Inbox{AgentID: "weather", Skill: "chat", Visibility: time.Minute})
	defer h.Close()
	h.Idle()
	for _, storeErr := range []error{nil, errors.New("disk full")} {
		m := chat("first")
		done := make(chan error, 1)
		go func() {
			_, err := b.Ask(ctx, m, nil, nil)
			done <- err
		}()
		select {
		case <-h.Ready():
		case <-ctx.Done():
			t.Fatal("the message was not handed over before it was stored")
		}
		got := h.Take()
		if len(got) != 1 || got[0] != m {
			t.Fatalf("handed %v, want the message asked", got)
		}
		select {
		case s.store <- storeErr:
		case <-ctx.Done():
			t.Fatal("the message was stored without waiting: not handed over first")
		}
		if storeErr != nil {
			if err := <-done; !errors.Is(err, storeErr) {
				t.Errorf("Ask = %v after the statements failed, want %v", err, storeErr)
			}
			continue
		}
		must(t, b.Post(ctx, &mcpgate.Message{ChannelID: "ch-1", AgentID: "weather", Type: mcpgate.MessageReply,
			InReplyTo: m.ID, Sender: "agent:weather"}))
		if err := <-done; err != nil {
			t.Fatalf("Ask = %v", err)
		}
	}
}
