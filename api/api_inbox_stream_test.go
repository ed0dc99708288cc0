package api

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// A resumed stream whose agent has more unacknowledged messages than one
// claim takes still ends its resume pass and goes on to deliver new ones.
func TestInboxResumeManyUnacked(t *testing.T) {
	f := mustAgentFixture(t, time.Hour, 0)
	ch := f.mustChannel(t, "ch_1")
	in := f.openInbox(t, f.shopKey, "", "")
	const n = inboxBatch + 1
	var last int64
	for range n {
		f.mustChat(t, ch, "q")
	}
	for range n {
		last = in.next(t).Seq
	}
	in.close()
	resumed := f.openInbox(t, f.shopKey, "", itoa(last))
	fresh := f.mustChat(t, ch, "fresh")
	if got := resumed.next(t); got.ID != fresh.ID {
		t.Errorf("resumed stream delivered %s (%q), want the new message %s", got.ID, got.Body.Text, fresh.ID)
	}
}

// An open inbox stream ends once its key is revoked: a worker whose key
// was taken away gets no more of the agent's messages.
func TestInboxEndsWhenKeyRevoked(t *testing.T) {
	f := mustAgentFixture(t, 40*time.Millisecond, 0)
	u, err := f.store.FindUserByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	k, secret := auth.NewKey(mcpgate.KeyAgent, u.ID, "shop", "revoked soon")
	if err := f.store.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	in := f.openInbox(t, secret, "", "")
	if err := f.store.RevokeKey(context.Background(), k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-in.events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the inbox stream of a revoked key is still open")
		}
	}
}

// A message stays with the open stream that took it, past any number of
// visibility timeouts, and goes to another stream as soon as the holder's
// ends without an answer: redelivery follows the holder's connection, not
// a clock (the old visibility timeout gave it to both).
func TestInboxHolderKeepsUntilGone(t *testing.T) {
	// The visibility timeout is long enough for the holder's renewals (four
	// per timeout) to keep up on a loaded machine.
	f := mustAgentFixture(t, 250*time.Millisecond, 0)
	ch := f.mustChannel(t, "ch_1")
	holder := f.openInbox(t, f.shopKey, "", "")
	m1 := f.mustChat(t, ch, "q")
	if got := holder.next(t); got.ID != m1.ID {
		t.Fatalf("holder got %s, want %s", got.ID, m1.ID)
	}
	other := f.openInbox(t, f.shopKey, "", "")
	time.Sleep(4 * 250 * time.Millisecond) // four visibility timeouts
	for len(other.events) > 0 {
		if ev := <-other.events; ev.comment == "" {
			t.Fatalf("another stream got %+v while the holder was open", ev)
		}
	}
	holder.close()
	if got := other.next(t); got.ID != m1.ID {
		t.Errorf("after the holder left, the other stream got %s, want %s", got.ID, m1.ID)
	}
}
