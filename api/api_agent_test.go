package api

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/skilledit"
)

// The bus serves the agent worker routes.
var _ MessageBus = (*bus.Bus)(nil)

// agentFixture is the API fixture with the message service: a second
// server over the same store, with a real bus.
type agentFixture struct {
	*apiFixture
	bus  *bus.Bus
	http *httptest.Server
}

// mustAgentFixture returns the fixture with the given visibility timeout
// and ping interval.
func mustAgentFixture(tb testing.TB, visibility, ping time.Duration) *agentFixture {
	tb.Helper()
	f := &agentFixture{apiFixture: mustAPIFixture(tb)}
	f.bus = bus.New(&bus.Options{Store: f.store, Logger: slog.New(slog.DiscardHandler)})
	tb.Cleanup(func() { f.bus.Close() })
	srv := New(&Options{
		Store: f.store, Skills: skilledit.Editor{Store: f.store}, Auth: auth.NewAuthenticator(f.store, nil),
		Bus: f.bus, Visibility: visibility, InboxPing: ping,
	})
	f.http = serveBehindServer(tb, f.store, f.registry, srv)
	f.apiFixture.http = f.http
	return f
}

// mustChannel opens a channel of agent shop's skill "ask" owned by alice
// and returns its ID.
func (f *agentFixture) mustChannel(tb testing.TB, id string) string {
	tb.Helper()
	u, err := f.store.FindUserByName(context.Background(), "alice")
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.store.CreateChannel(context.Background(), &mcpgate.Channel{ID: id, AgentID: "shop", Skill: "ask", Owner: "user:" + u.ID}); err != nil {
		tb.Fatal(err)
	}
	return id
}

// mustChat posts a chat_message with the text to a channel of shop.
func (f *agentFixture) mustChat(tb testing.TB, channel, text string) *mcpgate.Message {
	tb.Helper()
	m := &mcpgate.Message{ChannelID: channel, AgentID: "shop", Skill: "ask", Type: mcpgate.MessageChat, Sender: "user:x", Tool: "ask", Body: mcpgate.MessageBody{Text: text}}
	if err := f.bus.Post(context.Background(), m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// sseEvent is one event or comment of an inbox stream.
type sseEvent struct {
	id, event, data, comment string
}

// inbox is an open inbox stream whose events a goroutine reads.
type inbox struct {
	resp   *http.Response
	events chan sseEvent
}

// openInbox opens GET /api/v1/agent/inbox with a key and, unless empty, a
// Last-Event-ID.
func (f *agentFixture) openInbox(tb testing.TB, key, query, lastID string) *inbox {
	tb.Helper()
	req, err := http.NewRequest("GET", f.http.URL+"/api/v1/agent/inbox"+query, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("X-Agent-API-Key", key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		tb.Fatalf("inbox: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	in := &inbox{resp: resp, events: make(chan sseEvent, 64)}
	go in.read()
	tb.Cleanup(in.close)
	return in
}

// read parses the stream into events until it ends.
func (in *inbox) read() {
	defer close(in.events)
	sc := bufio.NewScanner(in.resp.Body)
	sc.Buffer(nil, 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev != (sseEvent{}) {
				in.events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			ev.comment = strings.TrimSpace(line[1:])
		default:
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "id":
				ev.id = v
			case "event":
				ev.event = v
			case "data":
				ev.data = v
			}
		}
	}
}

// close ends the stream.
func (in *inbox) close() { in.resp.Body.Close() }

// next returns the next message event, skipping comments.
func (in *inbox) next(tb testing.TB) *mcpgate.Message {
	tb.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-in.events:
			if !ok {
				tb.Fatal("inbox stream ended")
			}
			if ev.comment != "" {
				continue
			}
			var m mcpgate.Message
			if ev.event != "message" || json.Unmarshal([]byte(ev.data), &m) != nil {
				tb.Fatalf("event = %+v", ev)
			}
			if ev.id != itoa(m.Seq) {
				tb.Errorf("event id %s, message seq %d", ev.id, m.Seq)
			}
			return &m
		case <-timeout:
			tb.Fatal("no message on the inbox stream")
		}
	}
}

// itoa formats a seq.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// online reports whether the bus sees a stream of the agent's skill.
func (f *agentFixture) online(tb testing.TB, skill string) bool {
	tb.Helper()
	ok, err := f.bus.Online(context.Background(), "shop", skill)
	if err != nil {
		tb.Fatal(err)
	}
	return ok
}

func TestInboxDeliverReplyAndHistory(t *testing.T) {
	f := mustAgentFixture(t, time.Hour, 0)
	ch := f.mustChannel(t, "ch_1")
	in := f.openInbox(t, f.shopKey, "", "")
	if !f.online(t, "ask") {
		t.Error("agent shop is not online while its inbox stream is open")
	}
	chat := f.mustChat(t, ch, "what is 6*7?")
	got := in.next(t)
	if got.ID != chat.ID || got.Body.Text != "what is 6*7?" || got.Type != mcpgate.MessageChat || got.Tool != "ask" {
		t.Errorf("delivered %+v, want %+v", got, chat)
	}
	f.call(t, "POST", "/api/v1/channels/"+ch+"/messages", f.shopKey,
		`{"type":"agent_reply_delta","in_reply_to":"`+chat.ID+`","body":{"text":"thinking"}}`).want(t, 201)
	var reply mcpgate.Message
	f.call(t, "POST", "/api/v1/channels/"+ch+"/messages", f.shopKey,
		`{"type":"agent_reply","in_reply_to":"`+chat.ID+`","body":{"text":"42","data":{"n":42}}}`).want(t, 201).decode(t, &reply)
	if reply.Sender == "" || !strings.HasPrefix(reply.Sender, "agent_key:") || reply.ChannelID != ch || reply.Seq <= chat.Seq {
		t.Errorf("stored reply = %+v", reply)
	}
	f.call(t, "POST", "/api/v1/channels/"+ch+"/messages", f.shopKey,
		`{"type":"agent_error","in_reply_to":"`+chat.ID+`","body":{"text":"again"}}`).wantError(t, 409, mcpgate.ECONFLICT, "", "final reply")
	for _, key := range []string{f.alice, f.shopKey} {
		var page struct{ Messages []*mcpgate.Message }
		f.call(t, "GET", "/api/v1/channels/"+ch+"/messages?after=0&limit=10", key, "").want(t, 200).decode(t, &page)
		var types []mcpgate.MessageType
		for _, m := range page.Messages {
			types = append(types, m.Type)
		}
		if diff := cmp.Diff([]mcpgate.MessageType{mcpgate.MessageChat, mcpgate.MessageReplyDelta, mcpgate.MessageReply}, types); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
	}
	var page struct{ Messages []*mcpgate.Message }
	f.call(t, "GET", "/api/v1/channels/"+ch+"/messages?after="+itoa(chat.Seq)+"&limit=1", f.alice, "").want(t, 200).decode(t, &page)
	if len(page.Messages) != 1 || page.Messages[0].Type != mcpgate.MessageReplyDelta {
		t.Errorf("page after the chat message = %+v", page.Messages)
	}
	// The reply acknowledged the chat message: nothing is left to claim.
	if left, err := f.store.ClaimMessages(context.Background(), "shop", "", time.Now(), 0, 10); err != nil || len(left) != 0 {
		t.Errorf("claimable after the reply: %v, %v", left, err)
	}
	in.close()
}

func TestInboxRedeliveryAndAck(t *testing.T) {
	f := mustAgentFixture(t, 100*time.Millisecond, 0)
	ch := f.mustChannel(t, "ch_1")
	// A stream of skill api never claims a message of skill ask, or the
	// other stream would not get it within the visibility timeout.
	f.openInbox(t, f.shopKey, "?skill=api", "")
	in := f.openInbox(t, f.shopKey, "", "")
	chat := f.mustChat(t, ch, "hello")
	first := in.next(t)
	// Not acknowledged, it comes again; no longer to the open stream that
	// holds it after the visibility timeout (issue 19: that stream renews
	// it), but once that stream has ended, to the next one, at once.
	in.close()
	again := f.openInbox(t, f.shopKey, "", "").next(t)
	if first.ID != chat.ID || again.ID != chat.ID {
		t.Fatalf("deliveries %s, %s; want %s twice", first.ID, again.ID, chat.ID)
	}
	f.call(t, "POST", "/api/v1/agent/inbox/ack", f.shopKey, `{"ids":["`+chat.ID+`"]}`).want(t, 204)
	if left, err := f.store.ClaimMessages(context.Background(), "shop", "", time.Now(), 0, 10); err != nil || len(left) != 0 {
		t.Errorf("claimable after the ack: %v, %v", left, err)
	}
	f.call(t, "POST", "/api/v1/agent/inbox/ack", f.shopKey, `{"ids":["msg_nope"]}`).wantError(t, 404, mcpgate.ENOTFOUND, "ids", "msg_nope")
	f.call(t, "POST", "/api/v1/agent/inbox/ack", f.shopKey, `{"ids":[]}`).wantError(t, 400, mcpgate.EINVALID, "ids", "1 to")
}

func TestInboxResume(t *testing.T) {
	f := mustAgentFixture(t, time.Hour, 0)
	ch := f.mustChannel(t, "ch_1")
	in := f.openInbox(t, f.shopKey, "", "")
	a := f.mustChat(t, ch, "a")
	if got := in.next(t); got.ID != a.ID {
		t.Fatalf("got %s, want %s", got.ID, a.ID)
	}
	b := f.mustChat(t, ch, "b")
	if got := in.next(t); got.ID != b.ID {
		t.Fatalf("got %s, want %s", got.ID, b.ID)
	}
	in.close()
	// The worker saw a but lost b: it resumes after a, and b comes at
	// once although its visibility timeout is an hour away.
	c := f.mustChat(t, ch, "c")
	resumed := f.openInbox(t, f.shopKey, "", itoa(a.Seq))
	var got []string
	for range 2 {
		got = append(got, resumed.next(t).Body.Text)
	}
	if diff := cmp.Diff([]string{"b", "c"}, got); diff != "" {
		t.Errorf("resumed stream (-want +got):\n%s", diff)
	}
	// ?after= works as Last-Event-ID does.
	resumed.close()
	f.call(t, "POST", "/api/v1/agent/inbox/ack", f.shopKey, `{"ids":["`+b.ID+`"]}`).want(t, 204)
	after := f.openInbox(t, f.shopKey, "?after="+itoa(a.Seq), "")
	if m := after.next(t); m.ID != c.ID {
		t.Errorf("after ack of b, resumed with %s, want %s", m.Body.Text, c.Body.Text)
	}
}

func TestInboxPing(t *testing.T) {
	f := mustAgentFixture(t, time.Hour, 10*time.Millisecond)
	in := f.openInbox(t, f.shopKey, "", "")
	select {
	case ev := <-in.events:
		if ev.comment != "ping" {
			t.Errorf("first event = %+v, want a ping", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ping")
	}
}

func TestAgentRoutesRefuse(t *testing.T) {
	f := mustAgentFixture(t, time.Hour, 0)
	ch := f.mustChannel(t, "ch_1")
	chat := f.mustChat(t, ch, "x")
	bobsKey := f.mustKey(t, "bob", "bobs")
	post := func(typ, inReplyTo string) string {
		return `{"type":"` + typ + `","in_reply_to":"` + inReplyTo + `","body":{"text":"t"}}`
	}
	tests := []struct {
		name, method, path, key, body string
		status                        int
		code, field                   string
	}{
		{"inbox needs an agent key", "GET", "/api/v1/agent/inbox", "alice", "", 403, mcpgate.EFORBIDDEN, ""},
		{"inbox without a key", "GET", "/api/v1/agent/inbox", "", "", 401, mcpgate.EUNAUTHORIZED, ""},
		{"inbox of an unknown skill", "GET", "/api/v1/agent/inbox?skill=nope", "shop", "", 404, mcpgate.ENOTFOUND, "skill"},
		{"inbox with a bad Last-Event-ID", "GET", "/api/v1/agent/inbox?after=x", "shop", "", 400, mcpgate.EINVALID, "after"},
		{"ack needs an agent key", "POST", "/api/v1/agent/inbox/ack", "alice", `{"ids":["` + chat.ID + `"]}`, 403, mcpgate.EFORBIDDEN, ""},
		{"ack of another agent's message", "POST", "/api/v1/agent/inbox/ack", "bobs", `{"ids":["` + chat.ID + `"]}`, 404, mcpgate.ENOTFOUND, "ids"},
		{"post by a user key", "POST", "/api/v1/channels/ch_1/messages", "alice", post("agent_reply", chat.ID), 403, mcpgate.EFORBIDDEN, ""},
		{"post to another agent's channel", "POST", "/api/v1/channels/ch_1/messages", "bobs", post("agent_reply", chat.ID), 404, mcpgate.ENOTFOUND, ""},
		{"post to no channel", "POST", "/api/v1/channels/ch_x/messages", "shop", post("agent_reply", chat.ID), 404, mcpgate.ENOTFOUND, ""},
		{"post a chat message", "POST", "/api/v1/channels/ch_1/messages", "shop", post("chat_message", chat.ID), 400, mcpgate.EINVALID, "type"},
		{"post a cancel", "POST", "/api/v1/channels/ch_1/messages", "shop", post("cancel", chat.ID), 400, mcpgate.EINVALID, "type"},
		{"post without in_reply_to", "POST", "/api/v1/channels/ch_1/messages", "shop", post("agent_reply", ""), 400, mcpgate.EINVALID, "in_reply_to"},
		{"post in reply to no chat message", "POST", "/api/v1/channels/ch_1/messages", "shop", post("agent_reply", "msg_nope"), 400, mcpgate.EINVALID, "in_reply_to"},
		{"post an unknown field", "POST", "/api/v1/channels/ch_1/messages", "shop", `{"type":"agent_reply","in_reply_to":"x","sender":"me"}`, 400, mcpgate.EINVALID, "sender"},
		{"list by another user", "GET", "/api/v1/channels/ch_1/messages", "bob", "", 404, mcpgate.ENOTFOUND, ""},
		{"list by an admin who is not the owner", "GET", "/api/v1/channels/ch_1/messages", "root", "", 404, mcpgate.ENOTFOUND, ""},
		{"list by another agent's key", "GET", "/api/v1/channels/ch_1/messages", "bobs", "", 404, mcpgate.ENOTFOUND, ""},
		{"list with a bad limit", "GET", "/api/v1/channels/ch_1/messages?limit=5000", "alice", "", 400, mcpgate.EINVALID, "limit"},
	}
	keys := map[string]string{"alice": f.alice, "bob": f.bob, "root": f.root, "shop": f.shopKey, "bobs": bobsKey, "": ""}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.call(t, tt.method, tt.path, keys[tt.key], tt.body).wantError(t, tt.status, tt.code, tt.field, "")
		})
	}
}

func TestAgentRoutesWithoutBus(t *testing.T) {
	f := mustAPIFixture(t)
	f.call(t, "GET", "/api/v1/agent/inbox", f.shopKey, "").wantError(t, 503, mcpgate.EUNAVAILABLE, "", "message service")
}

func TestOpenAPIMessagePost(t *testing.T) {
	checkSchemaFields(t, map[string]any{"MessagePost": messagePost{}, "Message": mcpgate.Message{}, "MessageBody": mcpgate.MessageBody{}})
}
