package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// progress is one Progress notification.
type progress struct {
	N       float64
	Message string
}

// recorder is a Notifier that keeps the progress it is sent.
type recorder struct {
	mcpgate.NopNotifier
	mu  sync.Mutex
	got []progress
}

func (r *recorder) Progress(n, _ float64, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, progress{n, msg})
}

func (r *recorder) progress() []progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]progress(nil), r.got...)
}

var (
	testAgent = &mcpgate.Agent{ID: "helper", Name: "Helper", OwnerID: "u1", MCPEnabled: true}
	alice     = &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k1", UserID: "alice"}
	bob       = &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k2", UserID: "bob"}
)

// testSkill is an agent skill "ask" with its chat tool and a declared tool
// "lookup".
func testSkill() *mcpgate.Skill {
	sk := &mcpgate.Skill{AgentID: testAgent.ID, Name: "ask", Kind: mcpgate.SkillAgent, AutoApprove: true}
	sk.Tools = []*mcpgate.Tool{
		mcpgate.ChatTool(testAgent, sk),
		{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	return sk
}

// chatCall is a call of the chat tool with the given arguments.
func chatCall(sk *mcpgate.Skill, args, session string, cred *mcpgate.Credential) *mcpgate.Call {
	return &mcpgate.Call{
		Agent: testAgent, Skill: sk, Tool: sk.Tools[0], ToolName: sk.Tools[0].Name,
		Arguments: json.RawMessage(args), Caller: cred.Caller(), SessionID: session, Notifier: mcpgate.NopNotifier{},
	}
}

// outcome is what CallTool returned.
type outcome struct {
	res *mcpgate.Result
	err error
}

// start runs CallTool in a goroutine.
func start(b *Backend, ctx context.Context, call *mcpgate.Call) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		res, err := b.CallTool(ctx, call)
		out <- outcome{res, err}
	}()
	return out
}

// isChatTo matches a chat_message with the given text.
func isChatTo(text string) func(*mcpgate.Message) bool {
	return func(m *mcpgate.Message) bool { return m.Type == mcpgate.MessageChat && m.Body.Text == text }
}

// mustPost posts an agent's message in reply to chat.
func mustPost(tb testing.TB, bus *fakeBus, chat *mcpgate.Message, typ mcpgate.MessageType, body mcpgate.MessageBody) {
	tb.Helper()
	m := &mcpgate.Message{ChannelID: chat.ChannelID, AgentID: chat.AgentID, Skill: chat.Skill, Type: typ, InReplyTo: chat.ID, Sender: "agent_key:k", Body: body}
	if err := bus.Post(context.Background(), m); err != nil {
		tb.Fatal(err)
	}
}

// text returns the text of a result's first block.
func text(res *mcpgate.Result) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}

// meta returns the context ID in a result's _meta.
func meta(tb testing.TB, res *mcpgate.Result) string {
	tb.Helper()
	var w struct {
		Meta map[string]string `json:"_meta"`
	}
	if err := json.Unmarshal(res.Meta, &w.Meta); err != nil {
		tb.Fatal(err)
	}
	return w.Meta[MetaContextID]
}

func TestCallStreamsDeltasAndMapsReply(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	call := chatCall(testSkill(), `{"message":"sum column b"}`, "", alice)
	rec := &recorder{}
	call.Notifier = rec
	done := start(b, context.Background(), call)
	chat := bus.wait(t, isChatTo("sum column b"))
	if chat.Tool != "ask" || chat.Arguments != nil || chat.Sender != "user:alice" {
		t.Errorf("chat message = %+v", chat)
	}
	mustPost(t, bus, chat, mcpgate.MessageReplyDelta, mcpgate.MessageBody{Text: "adding"})
	mustPost(t, bus, chat, mcpgate.MessageReplyDelta, mcpgate.MessageBody{Text: "…"})
	mustPost(t, bus, chat, mcpgate.MessageReply, mcpgate.MessageBody{Text: "42", Data: json.RawMessage(`{"sum":42}`)})
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if text(got.res) != "42" || string(got.res.StructuredContent) != `{"sum":42}` || got.res.IsError {
		t.Errorf("result = %+v", got.res)
	}
	if meta(t, got.res) != chat.ChannelID {
		t.Errorf("_meta context_id = %q, want %q", meta(t, got.res), chat.ChannelID)
	}
	if diff := cmp.Diff([]progress{{1, "adding"}, {2, "…"}}, rec.progress()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestResultMapping(t *testing.T) {
	parts := []mcpgate.Content{{Type: "text", Text: "a"}, {Type: "image", Data: "AAAA", MimeType: "image/png"}}
	tests := []struct {
		name  string
		reply mcpgate.Message
		want  string
	}{
		{"text", mcpgate.Message{Type: mcpgate.MessageReply, Body: mcpgate.MessageBody{Text: "hi"}},
			`{"content":[{"type":"text","text":"hi"}],"_meta":{"mcpgate/context_id":"ch_1"}}`},
		{"parts win over text", mcpgate.Message{Type: mcpgate.MessageReply, Body: mcpgate.MessageBody{Text: "hi", Parts: parts}},
			`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"_meta":{"mcpgate/context_id":"ch_1"}}`},
		{"data object", mcpgate.Message{Type: mcpgate.MessageReply, Body: mcpgate.MessageBody{Text: "n", Data: json.RawMessage(`{"n":1}`)}},
			`{"content":[{"type":"text","text":"n"}],"structuredContent":{"n":1},"_meta":{"mcpgate/context_id":"ch_1"}}`},
		{"data array as text", mcpgate.Message{Type: mcpgate.MessageReply, Body: mcpgate.MessageBody{Data: json.RawMessage(`[1,2]`)}},
			`{"content":[{"type":"text","text":""},{"type":"text","text":"[1,2]"}],"_meta":{"mcpgate/context_id":"ch_1"}}`},
		{"error", mcpgate.Message{Type: mcpgate.MessageError, Body: mcpgate.MessageBody{Text: "no such column"}},
			`{"content":[{"type":"text","text":"no such column"}],"isError":true,"_meta":{"mcpgate/context_id":"ch_1"}}`},
		{"error without text", mcpgate.Message{Type: mcpgate.MessageError},
			`{"content":[{"type":"text","text":"The agent reported an error without a message."}],"isError":true,"_meta":{"mcpgate/context_id":"ch_1"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.reply.ChannelID = "ch_1"
			b, err := json.Marshal(result(&tt.reply))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("result JSON (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeclaredToolCarriesNameAndArguments(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	sk := testSkill()
	call := chatCall(sk, `{"id":7}`, "", alice)
	call.Tool, call.ToolName = sk.Tools[1], "lookup"
	done := start(b, context.Background(), call)
	chat := bus.wait(t, func(m *mcpgate.Message) bool { return m.Type == mcpgate.MessageChat })
	if chat.Tool != "lookup" || string(chat.Arguments) != `{"id":7}` || chat.Body.Text != "" {
		t.Errorf("chat message = %+v", chat)
	}
	mustPost(t, bus, chat, mcpgate.MessageError, mcpgate.MessageBody{Text: "no record 7"})
	if got := <-done; got.err != nil || !got.res.IsError || text(got.res) != "no record 7" {
		t.Errorf("CallTool = %+v, %v", got.res, got.err)
	}
}

func TestOfflineFailsAtOnce(t *testing.T) {
	bus := newFakeBus()
	bus.online = false
	b := New(&Options{Bus: bus, Channels: bus})
	_, err := b.CallTool(context.Background(), chatCall(testSkill(), `{"message":"hi"}`, "", alice))
	if mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE {
		t.Fatalf("err = %v, want EUNAVAILABLE", err)
	}
	if n := len(bus.all()); n != 0 {
		t.Errorf("%d messages posted for an offline agent", n)
	}
}

func TestTimeout(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	sk := testSkill()
	sk.Timeout = mcpgate.Duration(50 * time.Millisecond)
	_, err := b.CallTool(context.Background(), chatCall(sk, `{"message":"hi"}`, "", alice))
	if mcpgate.ErrorCode(err) != mcpgate.ETIMEOUT || mcpgate.ErrorMessage(err) != "Agent reply timeout" {
		t.Fatalf("err = %v, want ETIMEOUT Agent reply timeout", err)
	}
}

func TestCallerCancelPostsCancel(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	ctx, cancel := context.WithCancel(context.Background())
	done := start(b, ctx, chatCall(testSkill(), `{"message":"long job"}`, "", alice))
	chat := bus.wait(t, isChatTo("long job"))
	cancel()
	got := <-done
	if mcpgate.ErrorCode(got.err) != mcpgate.ECANCELED {
		t.Fatalf("err = %v, want ECANCELED", got.err)
	}
	c := bus.wait(t, func(m *mcpgate.Message) bool { return m.Type == mcpgate.MessageCancel })
	if c.InReplyTo != chat.ID || c.ChannelID != chat.ChannelID {
		t.Errorf("cancel message = %+v, want in reply to %s", c, chat.ID)
	}
}

// mustRoundTrip makes a call, answers it with "ok" and returns the channel
// it went to.
func mustRoundTrip(tb testing.TB, b *Backend, bus *fakeBus, call *mcpgate.Call) string {
	tb.Helper()
	before := int64(len(bus.all()))
	done := start(b, context.Background(), call)
	chat := bus.wait(tb, func(m *mcpgate.Message) bool { return m.Type == mcpgate.MessageChat && m.Seq > before })
	mustPost(tb, bus, chat, mcpgate.MessageReply, mcpgate.MessageBody{Text: "ok"})
	got := <-done
	if got.err != nil || text(got.res) != "ok" {
		tb.Fatalf("CallTool = %+v, %v", got.res, got.err)
	}
	return chat.ChannelID
}

func TestChannelChoice(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	sk := testSkill()
	s1a := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"1"}`, "sess1", alice))
	s1b := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"2"}`, "sess1", alice))
	s2 := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"3"}`, "sess2", alice))
	n1 := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"4"}`, "", alice))
	n2 := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"5"}`, "", alice))
	if s1a != s1b {
		t.Errorf("one session used channels %s and %s", s1a, s1b)
	}
	if s2 == s1a || n1 == n2 || n1 == s1a {
		t.Errorf("channels not distinct: sess1 %s, sess2 %s, none %s and %s", s1a, s2, n1, n2)
	}
	ctx1 := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"6","context_id":"trip-42"}`, "sess1", alice))
	ctx2 := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"7","context_id":"trip-42"}`, "sess9", alice))
	if ctx1 != "trip-42" || ctx2 != "trip-42" {
		t.Errorf("context_id channels = %s, %s; want trip-42", ctx1, ctx2)
	}
	again := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"8","context_id":"`+s2+`"}`, "", alice))
	if again != s2 {
		t.Errorf("context_id of a session channel went to %s, want %s", again, s2)
	}
}

func TestContextIDRefused(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	sk := testSkill()
	mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"mine","context_id":"alices"}`, "", alice))
	other := &mcpgate.Skill{AgentID: testAgent.ID, Name: "other", Kind: mcpgate.SkillAgent}
	other.Tools = []*mcpgate.Tool{mcpgate.ChatTool(testAgent, other)}
	tests := []struct {
		name string
		call *mcpgate.Call
		want string
	}{
		{"another caller", chatCall(sk, `{"message":"x","context_id":"alices"}`, "", bob), "belongs to another conversation"},
		{"another skill", chatCall(other, `{"message":"x","context_id":"alices"}`, "", alice), "belongs to another conversation"},
		{"malformed", chatCall(sk, `{"message":"x","context_id":"a b"}`, "", alice), "context_id"},
		{"no message", chatCall(sk, `{"message":""}`, "", alice), "needs a message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(bus.all())
			res, err := b.CallTool(context.Background(), tt.call)
			if err != nil || !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Fatalf("CallTool = %+v, %v; want an error result about %q", res, err, tt.want)
			}
			if n := len(bus.all()); n != before {
				t.Errorf("%d messages posted by a refused call", n-before)
			}
		})
	}
}

func TestWorkerGoneMidCallEndsUnavailableAndWithdraws(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus, PresenceCheck: 5 * time.Millisecond})
	done := start(b, context.Background(), chatCall(testSkill(), `{"message":"hold on"}`, "", alice))
	chat := bus.wait(t, isChatTo("hold on"))
	bus.mu.Lock()
	bus.online = false // the last worker went away
	bus.mu.Unlock()
	got := <-done
	if mcpgate.ErrorCode(got.err) != mcpgate.EUNAVAILABLE || !strings.Contains(mcpgate.ErrorMessage(got.err), testAgent.ID) {
		t.Fatalf("err = %v, want EUNAVAILABLE naming the agent", got.err)
	}
	c := bus.wait(t, func(m *mcpgate.Message) bool { return m.Type == mcpgate.MessageCancel })
	if c.InReplyTo != chat.ID {
		t.Errorf("cancel message = %+v, want in reply to %s", c, chat.ID)
	}
}

func TestKeptMessageIsNotWithdrawn(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus, Keep: func(*mcpgate.Call) bool { return true }})
	sk := testSkill()
	sk.Timeout = mcpgate.Duration(20 * time.Millisecond)
	if _, err := b.CallTool(context.Background(), chatCall(sk, `{"message":"durable"}`, "", alice)); mcpgate.ErrorCode(err) != mcpgate.ETIMEOUT {
		t.Fatalf("err = %v, want ETIMEOUT", err)
	}
	time.Sleep(50 * time.Millisecond) // a withdrawal would be posted in the background
	for _, m := range bus.all() {
		if m.Type == mcpgate.MessageCancel {
			t.Errorf("a kept message was withdrawn: %+v", m)
		}
	}
}

// A worker whose stream is reconnecting is offline for one check: the
// call waits on, and gets the reply.
func TestWorkerReconnectingIsNotGone(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus, PresenceCheck: 10 * time.Millisecond})
	done := start(b, context.Background(), chatCall(testSkill(), `{"message":"still there?"}`, "", alice))
	chat := bus.wait(t, isChatTo("still there?"))
	bus.mu.Lock()
	bus.flaps, bus.checks = 1, 0
	bus.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		bus.mu.Lock()
		checks := bus.checks
		bus.mu.Unlock()
		if checks >= 3 { // the offline answer, the second look, and one more check
			break
		} else if time.Now().After(deadline) {
			t.Fatal("the waiting call does not check presence")
		}
	}
	mustPost(t, bus, chat, mcpgate.MessageReply, mcpgate.MessageBody{Text: "yes"})
	if got := <-done; got.err != nil || text(got.res) != "yes" {
		t.Fatalf("CallTool = %+v, %v; want the reply", got.res, got.err)
	}
}

// A call that ended checks presence no more: its watch is stopped.
func TestEndedCallStopsWatching(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus, PresenceCheck: 5 * time.Millisecond})
	done := start(b, context.Background(), chatCall(testSkill(), `{"message":"quick"}`, "", alice))
	chat := bus.wait(t, isChatTo("quick"))
	for deadline := time.Now().Add(10 * time.Second); bus.checkCount() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiting call does not check presence")
		}
	}
	mustPost(t, bus, chat, mcpgate.MessageReply, mcpgate.MessageBody{Text: "done"})
	if got := <-done; got.err != nil || text(got.res) != "done" {
		t.Fatalf("CallTool = %+v, %v; want the reply", got.res, got.err)
	}
	ended := bus.checkCount()
	time.Sleep(40 * time.Millisecond)
	if n := bus.checkCount(); n != ended {
		t.Errorf("%d presence checks after the call ended", n-ended)
	}
}
