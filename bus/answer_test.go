package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
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
		m := chat("ping")
		posted := make(chan error, 1)
		reply, err := b.Ask(ctx, m, func() {
			go func() {
				posted <- b.Post(ctx, &mcpgate.Message{ChannelID: m.ChannelID, Type: mcpgate.MessageReply, InReplyTo: m.ID,
					Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "pong"}})
			}()
		}, nil)
		must(t, err)
		if reply.Body.Text != "pong" || reply.InReplyTo != m.ID {
			t.Errorf("Ask = %q to %s, want pong to %s", reply.Body.Text, reply.InReplyTo, m.ID)
		}
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
	_, err := b.Ask(ctx, m, func() {
		go func() {
			if err := b.Post(ctx, &mcpgate.Message{ChannelID: m.ChannelID, Type: mcpgate.MessageReplyDelta, InReplyTo: m.ID, Sender: "agent:weather"}); err != nil {
				t.Error(err)
			}
			posted <- b.Post(ctx, &mcpgate.Message{ChannelID: m.ChannelID, Type: mcpgate.MessageReply, InReplyTo: m.ID, Sender: "agent:weather"})
		}()
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Ask returned %v, want the commit's error", err)
	}
	if err := <-posted; err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("the reply's post returned %v, want the commit's error", err)
	}
}
