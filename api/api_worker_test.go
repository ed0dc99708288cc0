package api

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/skilledit"
)

// userReads is a Store that counts the reads of users.
type userReads struct {
	Store
	n atomic.Int64
}

func (s *userReads) FindUserByID(ctx context.Context, id string) (*mcpgate.User, error) {
	s.n.Add(1)
	return s.Store.FindUserByID(ctx, id)
}

// mustCountingWorkerFixture is mustAgentFixture with the API's store
// counting the reads of users.
func mustCountingWorkerFixture(tb testing.TB) (*agentFixture, *userReads) {
	tb.Helper()
	f := &agentFixture{apiFixture: mustAPIFixture(tb)}
	f.bus = bus.New(&bus.Options{Store: f.store, Logger: slog.New(slog.DiscardHandler)})
	tb.Cleanup(func() { f.bus.Close() })
	counted := &userReads{Store: f.store}
	srv := New(&Options{
		Store: counted, Skills: skilledit.Editor{Store: f.store}, Auth: auth.NewAuthenticator(f.store, nil),
		Bus: f.bus, Visibility: time.Hour,
	})
	f.http = serveBehindServer(tb, f.store, f.registry, srv)
	f.apiFixture.http = f.http
	return f, counted
}

// TestWorkerReadsNoUser: an agent worker's reply authenticates with its
// agent key without reading the key's user (its agent, owned by the user,
// proves the user exists); a key whose agent was given to another user and
// whose user was then deleted is still refused as one whose user is gone.
func TestWorkerReadsNoUser(t *testing.T) {
	f, counted := mustCountingWorkerFixture(t)
	ch := f.mustChannel(t, "ch_1")
	chat := f.mustChat(t, ch, "x")
	f.call(t, "POST", "/api/v1/channels/ch_1/messages", f.shopKey, `{"type":"agent_reply","in_reply_to":"`+chat.ID+`","body":{"text":"ok"}}`).want(t, 201)
	if n := counted.n.Load(); n != 0 {
		t.Errorf("the worker's reply read users %d times, want 0", n)
	}
	ctx := context.Background()
	shop, err := f.store.FindAgent(ctx, "shop")
	must(t, err)
	bob, err := f.store.FindUserByName(ctx, "bob")
	must(t, err)
	shop.OwnerID = bob.ID
	must(t, f.store.UpdateAgent(ctx, shop))
	f.call(t, "GET", "/api/v1/agent/inbox", f.shopKey, "").wantError(t, 403, mcpgate.EFORBIDDEN, "", "previous owner")
	alice, err := f.store.FindUserByName(ctx, "alice")
	must(t, err)
	must(t, f.store.DeleteUser(ctx, alice.ID))
	f.call(t, "GET", "/api/v1/agent/inbox", f.shopKey, "").wantError(t, 401, mcpgate.EUNAUTHORIZED, "", "")
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
