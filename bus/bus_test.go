package bus_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/sqlite"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// testTimeout bounds every wait of a test, so that a bug fails the test
// instead of hanging it; nothing is timed.
const testTimeout = 10 * time.Second

// mustSQLite opens a store in a new SQLite file with an agent "weather"
// and a channel "ch-1" of its skill "chat".
func mustSQLite(tb testing.TB) *sqlstore.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	mustFixture(tb, s)
	return s
}

// mustFixture creates the agent "weather" and its channel "ch-1".
func mustFixture(tb testing.TB, s mcpgate.Store) {
	tb.Helper()
	ctx := context.Background()
	u := &mcpgate.User{Name: "alice", PasswordHash: "x", Source: mcpgate.SourceCLI}
	must(tb, s.CreateUser(ctx, u))
	must(tb, s.CreateAgent(ctx, &mcpgate.Agent{ID: "weather", Name: "Weather", OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	must(tb, s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-1", AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID}))
}

// mustBus returns a Bus over s and broker, closed when the test ends.
func mustBus(tb testing.TB, s bus.Store, broker bus.Broker) *bus.Bus {
	tb.Helper()
	b := bus.New(&bus.Options{Store: s, Broker: broker})
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Error(err)
		}
	})
	return b
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// post posts a message of type typ on ch-1 through b.
func post(tb testing.TB, b *bus.Bus, typ mcpgate.MessageType, inReplyTo, text string) *mcpgate.Message {
	tb.Helper()
	m := &mcpgate.Message{ChannelID: "ch-1", Type: typ, InReplyTo: inReplyTo, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: text}}
	must(tb, b.Post(context.Background(), m))
	return m
}

// awaited is what an Await returned, with the texts of its deltas.
type awaited struct {
	reply  *mcpgate.Message
	deltas []string
	err    error
}

// await runs Await in a goroutine; the result arrives on the channel.
func await(ctx context.Context, b *bus.Bus, msgID string) <-chan awaited {
	out := make(chan awaited, 1)
	go func() {
		var a awaited
		a.reply, a.err = b.Await(ctx, "ch-1", msgID, func(m *mcpgate.Message) { a.deltas = append(a.deltas, m.Body.Text) })
		out <- a
	}()
	return out
}

// mustReply waits for an Await's result: the reply with text want after
// the deltas wantDeltas.
func mustReply(tb testing.TB, results <-chan awaited, want string, wantDeltas []string) {
	tb.Helper()
	select {
	case a := <-results:
		must(tb, a.err)
		if a.reply.Body.Text != want {
			tb.Errorf("reply %q, want %q", a.reply.Body.Text, want)
		}
		if diff := cmp.Diff(wantDeltas, a.deltas); diff != "" {
			tb.Errorf("deltas (-want +got):\n%s", diff)
		}
	case <-time.After(testTimeout):
		tb.Fatal("no reply")
	}
}

// deltas returns n delta texts.
func deltas(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("part %d ", i))
	}
	return out
}

// TestAwait posts the deltas and the reply while Await waits, racing its
// start, and with other calls on the same channel going on.
func TestAwait(t *testing.T) {
	b := mustBus(t, mustSQLite(t), nil)
	chat := post(t, b, mcpgate.MessageChat, "", "weather in Oslo?")
	other := post(t, b, mcpgate.MessageChat, "", "and in Rome?")
	results := await(context.Background(), b, chat.ID)
	want := deltas(250)
	for _, d := range want {
		post(t, b, mcpgate.MessageReplyDelta, chat.ID, d)
		post(t, b, mcpgate.MessageReplyDelta, other.ID, "not mine")
	}
	post(t, b, mcpgate.MessageReply, other.ID, "sunny in Rome")
	post(t, b, mcpgate.MessageReply, chat.ID, "rain in Oslo")
	mustReply(t, results, "rain in Oslo", want)
}

// TestAwaitReplyFirst posts the whole reply before Await starts.
func TestAwaitReplyFirst(t *testing.T) {
	b := mustBus(t, mustSQLite(t), nil)
	chat := post(t, b, mcpgate.MessageChat, "", "hi")
	post(t, b, mcpgate.MessageReplyDelta, chat.ID, "he")
	post(t, b, mcpgate.MessageReplyDelta, chat.ID, "llo")
	post(t, b, mcpgate.MessageError, chat.ID, "failed")
	mustReply(t, await(context.Background(), b, chat.ID), "failed", []string{"he", "llo"})
}

// TestAwaitEnds checks that Await ends with its context, and refuses a
// message of another channel.
func TestAwaitEnds(t *testing.T) {
	s := mustSQLite(t)
	b := mustBus(t, s, nil)
	chat := post(t, b, mcpgate.MessageChat, "", "hi")
	ctx, cancel := context.WithCancel(context.Background())
	results := await(ctx, b, chat.ID)
	post(t, b, mcpgate.MessageReplyDelta, chat.ID, "thinking")
	cancel()
	a := <-results
	if !errors.Is(a.err, context.Canceled) || a.reply != nil {
		t.Errorf("Await = %v, %v; want context.Canceled", a.reply, a.err)
	}
	must(t, s.CreateChannel(context.Background(), &mcpgate.Channel{ID: "ch-2", AgentID: "weather", Skill: "chat"}))
	_, err := b.Await(context.Background(), "ch-2", chat.ID, nil)
	if mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("Await of another channel's message: %v, want ENOTFOUND", err)
	}
}

// TestAwaitMany has 20 calls on one channel wait at once, each answered by
// its own goroutine.
func TestAwaitMany(t *testing.T) {
	b := mustBus(t, mustSQLite(t), nil)
	var wg sync.WaitGroup
	var results []<-chan awaited
	for i := range 20 {
		chat := post(t, b, mcpgate.MessageChat, "", fmt.Sprint(i))
		results = append(results, await(context.Background(), b, chat.ID))
		wg.Go(func() {
			for _, m := range []*mcpgate.Message{
				{ChannelID: "ch-1", Type: mcpgate.MessageReplyDelta, InReplyTo: chat.ID, Body: mcpgate.MessageBody{Text: "d"}},
				{ChannelID: "ch-1", Type: mcpgate.MessageReply, InReplyTo: chat.ID, Body: mcpgate.MessageBody{Text: fmt.Sprint("re ", i)}},
			} {
				if err := b.Post(context.Background(), m); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i, r := range results {
		mustReply(t, r, fmt.Sprint("re ", i), []string{"d"})
	}
}

// TestInbox checks that posts to the agent's workers signal its inbox,
// replies do not, and the inbox closes with its context.
func TestInbox(t *testing.T) {
	b := mustBus(t, mustSQLite(t), nil)
	ctx, cancel := context.WithCancel(context.Background())
	inbox := b.Inbox(ctx, "weather")
	other := b.Inbox(ctx, "other")
	chat := post(t, b, mcpgate.MessageChat, "", "hi")
	mustSignal(t, inbox)
	post(t, b, mcpgate.MessageReply, chat.ID, "hello")
	post(t, b, mcpgate.MessageCancel, chat.ID, "")
	mustSignal(t, inbox)
	select {
	case <-other:
		t.Error("another agent's inbox was signalled")
	default:
	}
	cancel()
	for range inbox {
	}
}

// mustSignal waits for a signal on c.
func mustSignal(tb testing.TB, c <-chan struct{}) {
	tb.Helper()
	select {
	case _, ok := <-c:
		if !ok {
			tb.Fatal("inbox closed")
		}
	case <-time.After(testTimeout):
		tb.Fatal("no signal")
	}
}

// TestPresence checks MarkOnline and Online on one replica and, through
// the store, on another sharing it.
func TestPresence(t *testing.T) {
	s := mustSQLite(t)
	a, b := mustBus(t, s, nil), mustBus(t, s, nil)
	ctx := context.Background()
	mustOnline(t, a, "weather", "chat", false)
	release1 := a.MarkOnline(ctx, "weather", "chat")
	release2 := a.MarkOnline(ctx, "weather", "chat")
	for _, r := range []*bus.Bus{a, b} {
		mustOnline(t, r, "weather", "chat", true)
		mustOnline(t, r, "weather", "", true)
		mustOnline(t, r, "weather", "search", false)
	}
	release1()
	release1()
	mustOnline(t, b, "weather", "chat", true)
	release2()
	mustOnline(t, a, "weather", "chat", false)
	mustOnline(t, b, "weather", "chat", false)

	releaseAll := b.MarkOnline(ctx, "weather", "")
	mustOnline(t, a, "weather", "search", true)
	mustOnline(t, b, "weather", "search", true)
	releaseAll()
	mustOnline(t, a, "weather", "search", false)
}

// TestPresenceExpires checks that a replica that stops refreshing its
// records (here: one whose heartbeat never comes) is offline once they
// expire, by asking the store about a later time.
func TestPresenceExpires(t *testing.T) {
	s := mustSQLite(t)
	b := bus.New(&bus.Options{Store: s, Heartbeat: time.Hour, PresenceTTL: time.Minute})
	defer func() { _ = b.Close() }()
	b.MarkOnline(context.Background(), "weather", "chat")
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{0, true}, {59 * time.Second, true}, {61 * time.Second, false}} {
		got, err := s.Present(context.Background(), "weather", "chat", time.Now().Add(tc.at))
		must(t, err)
		if got != tc.want {
			t.Errorf("present %v from now = %v, want %v", tc.at, got, tc.want)
		}
	}
	must(t, b.Close())
	got, err := s.Present(context.Background(), "weather", "chat", time.Now())
	must(t, err)
	if got {
		t.Error("present after Close")
	}
}

func mustOnline(tb testing.TB, b *bus.Bus, agentID, skill string, want bool) {
	tb.Helper()
	got, err := b.Online(context.Background(), agentID, skill)
	must(tb, err)
	if got != want {
		tb.Errorf("Online(%s, %q) = %v, want %v", agentID, skill, got, want)
	}
}
