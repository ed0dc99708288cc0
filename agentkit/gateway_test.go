package agentkit

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// testKey is the agent key the fake gateway accepts.
const testKey = "bak_test"

// delivery is one event the fake gateway's inbox streams send.
type delivery struct {
	m     *mcpgate.Message
	again bool // a redelivery: sent even after Last-Event-ID
}

// fakeGateway speaks the agent side of the wire contract: the inbox
// stream, acks, posting and listing a channel's messages.
type fakeGateway struct {
	srv *httptest.Server

	mu        sync.Mutex
	seq       int64
	events    []delivery
	acked     map[string]bool
	history   map[string][]*mcpgate.Message
	lastIDs   []string // Last-Event-ID of each stream opened
	wake      chan struct{}
	drop      chan struct{}
	posted    chan *mcpgate.Message
	ackedCh   chan string
	connected chan struct{}
	// posters holds the client address of every post: one per connection.
	posters map[string]bool
}

// newFakeGateway starts a fake gateway, stopped at the end of the test.
func newFakeGateway(t *testing.T) *fakeGateway {
	g := &fakeGateway{
		acked: map[string]bool{}, history: map[string][]*mcpgate.Message{}, posters: map[string]bool{},
		wake: make(chan struct{}), drop: make(chan struct{}),
		posted: make(chan *mcpgate.Message, 100), ackedCh: make(chan string, 100), connected: make(chan struct{}, 100),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/agent/inbox", g.inbox)
	mux.HandleFunc("POST /api/v1/agent/inbox/ack", g.ack)
	mux.HandleFunc("POST /api/v1/channels/{id}/messages", g.post)
	mux.HandleFunc("GET /api/v1/channels/{id}/messages", g.list)
	g.srv = httptest.NewServer(g.authed(mux))
	t.Cleanup(g.srv.Close)
	return g
}

// authed refuses requests without the test key.
func (g *fakeGateway) authed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":"unauthorized","message":"unknown key"}}`)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// deliver stores a message to the agent and wakes the streams.
func (g *fakeGateway) deliver(m *mcpgate.Message) *mcpgate.Message {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	m.Seq = g.seq
	if m.ID == "" {
		m.ID = "msg_" + strconv.FormatInt(m.Seq, 10)
	}
	if m.ChannelID == "" {
		m.ChannelID = "ch_1"
	}
	g.history[m.ChannelID] = append(g.history[m.ChannelID], m)
	g.events = append(g.events, delivery{m: m})
	g.wakeLocked()
	return m
}

// addHistory stores messages on a channel without delivering them.
func (g *fakeGateway) addHistory(channelID string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for range n {
		g.seq++
		id := "msg_" + strconv.FormatInt(g.seq, 10)
		g.history[channelID] = append(g.history[channelID], &mcpgate.Message{ID: id, Seq: g.seq, ChannelID: channelID, Type: mcpgate.MessageReply})
	}
}

// redeliver sends a message again, as after its visibility timeout.
func (g *fakeGateway) redeliver(m *mcpgate.Message) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.events = append(g.events, delivery{m: m, again: true})
	g.wakeLocked()
}

// wakeLocked wakes every stream waiting for events.
func (g *fakeGateway) wakeLocked() {
	close(g.wake)
	g.wake = make(chan struct{})
}

// dropStreams ends the open streams.
func (g *fakeGateway) dropStreams() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.drop)
	g.drop = make(chan struct{})
}

// inbox streams the events, skipping acknowledged messages and those up
// to Last-Event-ID unless redelivered.
func (g *fakeGateway) inbox(w http.ResponseWriter, r *http.Request) {
	last, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	g.mu.Lock()
	g.lastIDs = append(g.lastIDs, r.Header.Get("Last-Event-ID"))
	drop := g.drop
	g.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": ping\n\n")
	w.(http.Flusher).Flush()
	g.connected <- struct{}{}
	for next := 0; ; {
		g.mu.Lock()
		batch, wake := g.events[next:], g.wake
		next = len(g.events)
		for _, d := range batch {
			if !d.again && (g.acked[d.m.ID] || d.m.Seq <= last) {
				continue
			}
			b, _ := json.Marshal(d.m)
			fmt.Fprintf(w, "id: %d\nevent: message\ndata: %s\n\n", d.m.Seq, b)
		}
		g.mu.Unlock()
		w.(http.Flusher).Flush()
		select {
		case <-wake:
		case <-drop:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// ack records acknowledged IDs.
func (g *fakeGateway) ack(w http.ResponseWriter, r *http.Request) {
	var body struct {
		IDs []string `json:"ids"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	g.mu.Lock()
	for _, id := range body.IDs {
		g.acked[id] = true
	}
	g.mu.Unlock()
	for _, id := range body.IDs {
		g.ackedCh <- id
	}
	w.WriteHeader(http.StatusNoContent)
}

// post stores an agent's message; a final reply acknowledges its chat
// message, and a second one is refused.
func (g *fakeGateway) post(w http.ResponseWriter, r *http.Request) {
	var m mcpgate.Message
	json.NewDecoder(r.Body).Decode(&m)
	m.ChannelID = r.PathValue("id")
	g.mu.Lock()
	if m.Type.Final() && g.acked["final:"+m.InReplyTo] {
		g.mu.Unlock()
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"error":{"code":"conflict","message":"replied already"}}`)
		return
	}
	g.seq++
	m.Seq, m.ID = g.seq, "msg_"+strconv.FormatInt(g.seq, 10)
	if m.Type.Final() {
		g.acked[m.InReplyTo], g.acked["final:"+m.InReplyTo] = true, true
	}
	g.history[m.ChannelID] = append(g.history[m.ChannelID], &m)
	g.posters[r.RemoteAddr] = true
	g.mu.Unlock()
	g.posted <- &m
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(&m)
}

// list pages through a channel's messages.
func (g *fakeGateway) list(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	g.mu.Lock()
	out := []*mcpgate.Message{}
	for _, m := range g.history[r.PathValue("id")] {
		if m.Seq > after && len(out) < limit {
			out = append(out, m)
		}
	}
	g.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"messages": out})
}

// lastEventIDs returns the Last-Event-ID of each stream opened so far.
func (g *fakeGateway) lastEventIDs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.lastIDs...)
}

// chat returns a chat message calling the chat tool with text.
func chat(text string) *mcpgate.Message {
	args, _ := json.Marshal(map[string]string{"message": text})
	return &mcpgate.Message{Type: mcpgate.MessageChat, Skill: "helper", Tool: "helper", Arguments: args, Sender: "user:u1"}
}

// startWorker runs a worker with h against g until the test ends, and
// waits for its stream.
func startWorker(t *testing.T, g *fakeGateway, opts Options, h HandlerFunc) {
	t.Helper()
	opts.URL, opts.Key = g.srv.URL, testKey
	opts.MinBackoff = time.Millisecond
	opts.Logger = slog.New(slog.DiscardHandler)
	w := New(opts)
	w.Handle(h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	mustReceive(t, g.connected)
}

// mustReceive returns the next value of ch, failing after a generous bound.
func mustReceive[T any](tb testing.TB, ch <-chan T) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		tb.Fatalf("nothing arrived within 10s")
		var zero T
		return zero
	}
}

// mustNotReceive fails if ch holds a value now.
func mustNotReceive[T any](tb testing.TB, ch <-chan T) {
	tb.Helper()
	select {
	case v := <-ch:
		tb.Fatalf("unexpected %v", v)
	default:
	}
}

// text returns a message's text, for diffs.
func text(m *mcpgate.Message) string {
	return strings.Join([]string{string(m.Type), m.InReplyTo, m.Body.Text}, " ")
}
