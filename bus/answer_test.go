package bus_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// slowCommitStore holds each reply posted through PostReplyHanded, once
// stored, until its test sends what the reply's commit returns.
type slowCommitStore struct {
	*sqlstore.Store
	commit chan error
}

func (s *slowCommitStore) PostReplyHanded(ctx context.Context, m *mcpgate.Message, hand func()) error {
	if err := s.Store.PostReplyHanded(ctx, m, hand); err != nil {
		return err
	}
	return <-s.commit
}

// TestAskAnsweredBeforeCommit: a final reply to a call waiting on this
// replica reaches the call as soon as it is handed over, while its commit
// still runs; the reply's post returns once that commit ended, with its
// error (the call has its answer either way).
func TestAskAnsweredBeforeCommit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &slowCommitStore{Store: mustSQLite(t), commit: make(chan error)}
	b := mustBus(t, s, nil)
	for _, commitErr := range []error{nil, errors.New("disk full")} {
		// Its poster names no agent: the bus hands the reply over only
		// once the store ran its statements (claim: TestAskAnsweredBeforeStored).
		m := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u", Body: mcpgate.MessageBody{Text: "ping"}}
		_, posted := askPong(ctx, t, b, m)
		select {
		case err := <-posted:
			t.Fatalf("the reply's post returned (%v) before its commit ended", err)
		default:
		}
		s.commit <- commitErr
		if err := <-posted; !errors.Is(err, commitErr) {
			t.Errorf("the reply's post returned %v, want the commit's %v", err, commitErr)
		}
	}
}

// askPong asks m and answers it with a final reply "pong" from m's agent
// (the one its poster named, if any), posted in another goroutine; it
// returns the reply Ask returned, and the channel that receives what the
// reply's post returned.
func askPong(ctx context.Context, t *testing.T, b *bus.Bus, m *mcpgate.Message) (*mcpgate.Message, <-chan error) {
	t.Helper()
	posted := make(chan error, 1)
	reply, err := b.Ask(ctx, m, func() {
		go func() {
			posted <- b.Post(ctx, &mcpgate.Message{ChannelID: m.ChannelID, AgentID: m.AgentID, Type: mcpgate.MessageReply,
				InReplyTo: m.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "pong"}})
		}()
	}, nil)
	must(t, err)
	if reply.Body.Text != "pong" || reply.InReplyTo != m.ID {
		t.Errorf("Ask = %q to %s, want pong to %s", reply.Body.Text, reply.InReplyTo, m.ID)
	}
	return reply, posted
}

// deltaThenReply returns the posted function of an Ask of m that, from
// another goroutine, posts a delta to m and then a final reply, and sends
// what the reply's post returned on replied.
func deltaThenReply(ctx context.Context, t *testing.T, b *bus.Bus, m *mcpgate.Message, replied chan<- error) func() {
	return func() {
		go func() {
			if err := b.Post(ctx, &mcpgate.Message{ChannelID: m.ChannelID, Type: mcpgate.MessageReplyDelta, InReplyTo: m.ID, Sender: "agent:weather"}); err != nil {
				t.Error(err)
			}
			replied <- b.Post(ctx, &mcpgate.Message{ChannelID: m.ChannelID, Type: mcpgate.MessageReply, InReplyTo: m.ID, Sender: "agent:weather"})
		}()
	}
}

// droppingStore hands each reply posted through PostReplyHanded over, then
// fails its commit: the reply is not stored.
type droppingStore struct {
	*sqlstore.Store
}

func (droppingStore) PostReplyHanded(_ context.Context, _ *mcpgate.Message, hand func()) error {
	hand()
	return errors.New("disk full")
}

// TestAskReplyLostAfterHandover: a call that had deltas reads its final
// reply from the store; when that reply was handed over and then lost in
// a failed commit, the call ends with the commit's error instead of
// waiting for a reply the store does not have.
func TestAskReplyLostAfterHandover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := mustBus(t, droppingStore{mustSQLite(t)}, nil)
	m := chat("ping")
	posted := make(chan error, 1)
	_, err := b.Ask(ctx, m, deltaThenReply(ctx, t, b, m, posted), nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Ask returned %v, want the commit's error", err)
	}
	if err := <-posted; err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("the reply's post returned %v, want the commit's error", err)
	}
}

// holdingStore holds each reply posted through PostReplyHanded before it
// runs its statements, until its test sends nil (then it stores the
// reply) or the error the post returns instead.
type holdingStore struct {
	*sqlstore.Store
	release chan error
}

func (s *holdingStore) PostReplyHanded(ctx context.Context, m *mcpgate.Message, hand func()) error {
	if err := <-s.release; err != nil {
		return err
	}
	return s.Store.PostReplyHanded(ctx, m, hand)
}

func (s *holdingStore) PostClaimedReply(ctx context.Context, m *mcpgate.Message, lost func(error)) error {
	if err := <-s.release; err != nil {
		return err
	}
	return s.Store.PostClaimedReply(ctx, m, lost)
}

// TestAskAnsweredBeforeStored: the final reply to a chat_message whose
// poster named its agent and skill, posted on its channel by its agent,
// reaches the waiting call before the store has run its statements; the
// call's copy is the stored reply but for its seq, which only the store
// gives. The reply's post returns what storing it returned.
func TestAskAnsweredBeforeStored(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &holdingStore{Store: mustSQLite(t), release: make(chan error)}
	b := mustBus(t, s, nil)
	for _, storeErr := range []error{nil, errors.New("disk full")} {
		m := chat("ping")
		reply, posted := askPong(ctx, t, b, m)
		s.release <- storeErr
		if err := <-posted; !errors.Is(err, storeErr) {
			t.Errorf("the reply's post returned %v, want %v", err, storeErr)
		}
		if storeErr != nil {
			continue
		}
		stored, err := s.FindReply(ctx, m.ID)
		must(t, err)
		if diff := cmp.Diff(stored, reply, cmpopts.IgnoreFields(mcpgate.Message{}, "Seq")); diff != "" {
			t.Errorf("the handed reply differs from the stored one (-stored +got):\n%s", diff)
		}
	}
}

// TestAskNotClaimedByOthers: a final reply that names the call's message
// but comes from another agent, or on another channel, is not handed to
// the call before the store checked it (the store refuses it); the call
// gets its own agent's reply.
func TestAskNotClaimedByOthers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := mustSQLite(t)
	must(t, s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-2", AgentID: "weather", Skill: "chat", Owner: "user:u"}))
	b := mustBus(t, s, nil)
	m := chat("ping")
	var answered sync.WaitGroup
	reply, err := b.Ask(ctx, m, func() {
		answered.Go(func() {
			for _, r := range []*mcpgate.Message{
				{ChannelID: m.ChannelID, AgentID: "intruder", Body: mcpgate.MessageBody{Text: "from another agent"}},
				{ChannelID: "ch-2", AgentID: m.AgentID, Body: mcpgate.MessageBody{Text: "on another channel"}},
			} {
				r.Type, r.InReplyTo, r.Sender = mcpgate.MessageReply, m.ID, "agent:x"
				if err := b.Post(ctx, r); err == nil {
					t.Errorf("the store took the reply %q", r.Body.Text)
				}
			}
			if err := b.Post(ctx, &mcpgate.Message{ChannelID: m.ChannelID, AgentID: m.AgentID, Type: mcpgate.MessageReply,
				InReplyTo: m.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "pong"}}); err != nil {
				t.Error(err)
			}
		})
	}, nil)
	answered.Wait()
	must(t, err)
	if reply.Body.Text != "pong" {
		t.Errorf("Ask = %q, want pong", reply.Body.Text)
	}
}

// recordingStore counts the replies posted through PostClaimedReply and
// PostReplyHanded, and keeps the skill of the last one vouched for.
type recordingStore struct {
	*sqlstore.Store
	mu              sync.Mutex
	claimed, handed int
	skill           string
}

func (s *recordingStore) PostReplyHanded(ctx context.Context, m *mcpgate.Message, hand func()) error {
	s.mu.Lock()
	s.handed++
	s.mu.Unlock()
	return s.Store.PostReplyHanded(ctx, m, hand)
}

func (s *recordingStore) PostClaimedReply(ctx context.Context, m *mcpgate.Message, lost func(error)) error {
	s.mu.Lock()
	s.claimed++
	s.skill = m.Skill
	s.mu.Unlock()
	return s.Store.PostClaimedReply(ctx, m, lost)
}

// TestClaimedReplyVouchedFor: a final reply the bus claimed for its call
// is posted through PostClaimedReply, with the channel's skill; one it
// could not claim (the call had a delta) through PostReplyHanded, for
// the store to check.
func TestClaimedReplyVouchedFor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s := &recordingStore{Store: mustSQLite(t)}
	b := mustBus(t, s, nil)
	_, posted := askPong(ctx, t, b, chat("ping"))
	must(t, <-posted)
	if s.claimed != 1 || s.handed != 0 || s.skill != "chat" {
		t.Errorf("claimed %d (skill %q), handed %d; want 1 (chat), 0", s.claimed, s.skill, s.handed)
	}
	m := chat("ping again")
	done := make(chan error, 1)
	_, err := b.Ask(ctx, m, deltaThenReply(ctx, t, b, m, done), nil)
	must(t, err)
	must(t, <-done)
	if s.claimed != 1 || s.handed != 1 {
		t.Errorf("after a reply with a delta: claimed %d, handed %d; want 1, 1", s.claimed, s.handed)
	}
}

// lateLossStore stores each claimed reply, then tells its lost that the
// commit failed, as SQLite's store does when the transaction it returned
// from fails to commit.
type lateLossStore struct {
	*sqlstore.Store
}

func (s lateLossStore) PostClaimedReply(ctx context.Context, m *mcpgate.Message, lost func(error)) error {
	if err := s.Store.PostClaimedReply(ctx, m, func(error) {}); err != nil {
		return err
	}
	lost(errors.New("disk full"))
	return nil
}

// TestClaimedReplyLostLate: a claimed reply's post returns before its
// commit; when that commit fails, the call has its answer already, the
// reply's post has returned, and the loss is logged.
func TestClaimedReplyLostLate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var logged strings.Builder
	var mu sync.Mutex
	b := bus.New(&bus.Options{Store: lateLossStore{mustSQLite(t)}, Logger: slog.New(slog.NewTextHandler(&lockedWriter{&mu, &logged}, nil))})
	t.Cleanup(func() { _ = b.Close() })
	m := chat("ping")
	_, posted := askPong(ctx, t, b, m)
	must(t, <-posted)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "a reply handed to its call was not stored") || !strings.Contains(logged.String(), "disk full") {
		t.Errorf("logged %q, want the reply's loss", logged.String())
	}
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
