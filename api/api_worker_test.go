package api

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/skilledit"
)

// userReads is a Store that counts the reads of users (n), agents and
// channels, and records the messages each renewal was asked to renew.
type userReads struct {
	Store
	n                atomic.Int64
	agents, channels atomic.Int64

	mu      sync.Mutex
	renewed [][]string
	// keepAll makes RenewMessages answer that every message it was asked
	// for is still held, acknowledged or not.
	keepAll bool
}

func (s *userReads) FindUserByID(ctx context.Context, id string) (*mcpgate.User, error) {
	s.n.Add(1)
	return s.Store.FindUserByID(ctx, id)
}

func (s *userReads) FindAgent(ctx context.Context, id string) (*mcpgate.Agent, error) {
	s.agents.Add(1)
	return s.Store.FindAgent(ctx, id)
}

func (s *userReads) FindChannel(ctx context.Context, id string) (*mcpgate.Channel, error) {
	s.channels.Add(1)
	return s.Store.FindChannel(ctx, id)
}

func (s *userReads) RenewMessages(ctx context.Context, agentID string, held map[string]time.Time, now time.Time) ([]string, error) {
	ids := slices.Collect(maps.Keys(held))
	s.mu.Lock()
	s.renewed = append(s.renewed, ids)
	keepAll := s.keepAll
	s.mu.Unlock()
	renewed, err := s.Store.RenewMessages(ctx, agentID, held, now)
	if keepAll && err == nil {
		return ids, nil
	}
	return renewed, err
}

// renewals returns the IDs each renewal so far was asked to renew.
func (s *userReads) renewals() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.renewed)
}

// mustCountingWorkerFixture is mustAgentFixture with the API's store
// counting the reads of users and recording renewals.
func mustCountingWorkerFixture(tb testing.TB, visibility time.Duration) (*agentFixture, *userReads) {
	tb.Helper()
	return mustCountingFixture(tb, visibility, false)
}

// mustCountingFixture is mustCountingWorkerFixture whose API finds agents
// in the fixture's registry when inMemory is set.
func mustCountingFixture(tb testing.TB, visibility time.Duration, inMemory bool) (*agentFixture, *userReads) {
	tb.Helper()
	f := &agentFixture{apiFixture: mustAPIFixture(tb)}
	f.bus = bus.New(&bus.Options{Store: f.store, Logger: slog.New(slog.DiscardHandler)})
	tb.Cleanup(func() { f.bus.Close() })
	counted := &userReads{Store: f.store}
	opts := &Options{
		Store: counted, Skills: skilledit.Editor{Store: f.store}, Auth: auth.NewAuthenticator(f.store, nil),
		Bus: f.bus, Visibility: visibility,
	}
	if inMemory {
		opts.Agents = f.registry
	}
	srv := New(opts)
	f.http = serveBehindServer(tb, f.store, f.registry, srv)
	f.apiFixture.http = f.http
	return f, counted
}

// TestWorkerReadsNoUser: an agent worker's reply authenticates with its
// agent key without reading the key's user (its agent, owned by the user,
// proves the user exists); a key whose agent was given to another user and
// whose user was then deleted is still refused as one whose user is gone.
func TestWorkerReadsNoUser(t *testing.T) {
	f, counted := mustCountingWorkerFixture(t, time.Hour)
	ch := f.mustChannel(t, "ch_1")
	chat := f.mustChat(t, ch, "x")
	f.call(t, "POST", "/api/v1/channels/ch_1/messages", f.shopKey, `{"type":"agent_reply","in_reply_to":"`+chat.ID+`","body":{"text":"ok"}}`).want(t, 201)
	if n := counted.n.Load(); n != 0 {
		t.Errorf("the worker's reply read users %d times, want 0", n)
	}
	ctx := context.Background()
	f.giveAgent(t, "shop", "bob")
	f.call(t, "GET", "/api/v1/agent/inbox", f.shopKey, "").wantError(t, 403, mcpgate.EFORBIDDEN, "", "previous owner")
	alice, err := f.store.FindUserByName(ctx, "alice")
	must(t, err)
	must(t, f.store.DeleteUser(ctx, alice.ID))
	f.call(t, "GET", "/api/v1/agent/inbox", f.shopKey, "").wantError(t, 401, mcpgate.EUNAUTHORIZED, "", "")
}

// TestWorkerReplyReadsNoAgentOrChannel: with the registry's agents at
// hand, a worker's reply reads neither its agent nor the channel from the
// store (the post names the key's agent, and the store refuses a channel
// of another); a key of an agent given to another owner is still refused
// once the registry holds the change, and a reply to another agent's
// channel is refused as one to no channel.
func TestWorkerReplyReadsNoAgentOrChannel(t *testing.T) {
	f, counted := mustCountingFixture(t, time.Hour, true)
	ctx := context.Background()
	must(t, f.registry.Reload(ctx))
	ch := f.mustChannel(t, "ch_1")
	chat := f.mustChat(t, ch, "x")
	f.call(t, "POST", "/api/v1/channels/ch_1/messages", f.shopKey, `{"type":"agent_reply","in_reply_to":"`+chat.ID+`","body":{"text":"ok"}}`).want(t, 201)
	if a, c := counted.agents.Load(), counted.channels.Load(); a != 0 || c != 0 {
		t.Errorf("the worker's reply read agents %d times and channels %d times, want 0 and 0", a, c)
	}
	must(t, f.store.CreateChannel(ctx, &mcpgate.Channel{ID: "ch_bob", AgentID: "bobs", Skill: "ask", Owner: "user:x"}))
	bobs := &mcpgate.Message{ChannelID: "ch_bob", AgentID: "bobs", Type: mcpgate.MessageChat, Sender: "user:x", Body: mcpgate.MessageBody{Text: "y"}}
	must(t, f.bus.Post(ctx, bobs))
	f.call(t, "POST", "/api/v1/channels/ch_bob/messages", f.shopKey, `{"type":"agent_reply","in_reply_to":"`+bobs.ID+`","body":{"text":"ok"}}`).
		wantError(t, 404, mcpgate.ENOTFOUND, "", "ch_bob")
	f.giveAgent(t, "shop", "bob")
	must(t, f.registry.Reload(ctx))
	f.call(t, "GET", "/api/v1/agent/inbox", f.shopKey, "").wantError(t, 403, mcpgate.EFORBIDDEN, "", "previous owner")
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// TestInboxRenewsOnlyUnanswered: a stream stops renewing a message it
// delivered once a reply posted on this replica answered it, without
// waiting for the store to tell it so (before, the next renewal asked the
// store to renew it, and only the store's answer dropped it). The store
// here answers that every message asked for is still unacknowledged, so
// only the stream's own knowledge of the reply can drop it.
func TestInboxRenewsOnlyUnanswered(t *testing.T) {
	f, counted := mustCountingWorkerFixture(t, 40*time.Millisecond) // a renewal every 10 ms
	counted.keepAll = true
	ch := f.mustChannel(t, "ch_1")
	in := f.openInbox(t, f.shopKey, "", "")
	answered, open := f.mustChat(t, ch, "answered"), f.mustChat(t, ch, "open")
	for _, want := range []string{answered.ID, open.ID} {
		if m := in.next(t); m.ID != want {
			t.Fatalf("stream sent %s, want %s", m.ID, want)
		}
	}
	f.call(t, "POST", "/api/v1/channels/ch_1/messages", f.shopKey, `{"type":"agent_reply","in_reply_to":"`+answered.ID+`","body":{"text":"ok"}}`).want(t, 201)
	before := len(counted.renewals())
	deadline := time.Now().Add(10 * time.Second)
	for len(counted.renewals()) < before+2 {
		if time.Now().After(deadline) {
			t.Fatal("no renewals")
		}
		time.Sleep(5 * time.Millisecond)
	}
	last := counted.renewals()[before+1] // the one at before may have begun before the reply
	if slices.Contains(last, answered.ID) || !slices.Contains(last, open.ID) {
		t.Errorf("a renewal after the reply asked for %v, want only the unanswered %s", last, open.ID)
	}
}

// TestRenewalDue: a renewal renews the messages held a quarter of the
// visibility or longer, and leaves the younger ones for the next.
func TestRenewalDue(t *testing.T) {
	now := time.Now()
	held := map[string]time.Time{
		"old":     now.Add(-3 * time.Second),
		"quarter": now.Add(-time.Second),
		"young":   now.Add(-999 * time.Millisecond),
		"new":     now,
	}
	got := slices.Sorted(maps.Keys(due(held, now, 4*time.Second)))
	if !slices.Equal(got, []string{"old", "quarter"}) {
		t.Errorf("due = %v, want old and quarter", got)
	}
}

// giveAgent makes user the owner of agent, in the store.
func (f *agentFixture) giveAgent(t *testing.T, agent, user string) {
	t.Helper()
	ctx := context.Background()
	a, err := f.store.FindAgent(ctx, agent)
	must(t, err)
	u, err := f.store.FindUserByName(ctx, user)
	must(t, err)
	a.OwnerID = u.ID
	must(t, f.store.UpdateAgent(ctx, a))
}
