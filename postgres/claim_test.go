package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// A claim on PostgreSQL does not wait for a post of the same agent whose
// transaction holds the agent's seq lock: it takes the committed message
// while the post is still open. (It used to lock the counter first, and
// so waited for every post of the agent to commit.) The wait below only
// detects a claim that hangs; nothing is timed.
func TestClaimDoesNotWaitForPosts(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, pgtest.Database(t, pgtest.Admin(t)))
	u := &mcpgate.User{Name: "alice", PasswordHash: "x", Source: mcpgate.SourceCLI}
	mustDo(t, s.CreateUser(ctx, u))
	mustDo(t, s.CreateAgent(ctx, &mcpgate.Agent{ID: "weather", Name: "Weather", OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	mustDo(t, s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-1", AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID}))
	first := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:" + u.ID}
	mustDo(t, s.PostMessage(ctx, first))

	err := s.Tx(ctx, func(tx mcpgate.Store) error {
		if err := tx.PostMessage(ctx, &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:" + u.ID}); err != nil {
			return err
		}
		claimed, failed := make(chan []*mcpgate.Message, 1), make(chan error, 1)
		go func() {
			msgs, err := s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 10)
			if err != nil {
				failed <- err
				return
			}
			claimed <- msgs
		}()
		select {
		case err := <-failed:
			t.Error(err)
		case msgs := <-claimed:
			if len(msgs) != 1 || msgs[0].ID != first.ID {
				t.Errorf("claimed %v, want the committed message", msgs)
			}
		case <-time.After(10 * time.Second):
			t.Error("the claim waited for the open post")
		}
		return nil
	})
	mustDo(t, err)
}

func mustDo(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
