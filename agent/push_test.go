package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pushsig"
)

const testSecret = "push-secret-1"

// receiver is a push target on 127.0.0.1 that checks each envelope's
// signature and answers with the next of its canned responses (the last
// one repeats).
type receiver struct {
	mu        sync.Mutex
	envelopes []*mcpgate.Message
	parents   []string // each request's traceparent header
	bad       []string // why a request was refused
	responses []cannedResponse
	got       chan *mcpgate.Message
	srv       *httptest.Server
}

// cannedResponse is one response of a receiver.
type cannedResponse struct {
	status int
	body   string
}

func newReceiver(tb testing.TB, responses ...cannedResponse) *receiver {
	tb.Helper()
	r := &receiver{responses: responses, got: make(chan *mcpgate.Message, 16)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	err := pushsig.Verify([]byte(testSecret), req.Header.Get(pushsig.Header), body, time.Now(), 0)
	var m mcpgate.Message
	r.mu.Lock()
	switch {
	case err != nil:
		r.bad = append(r.bad, err.Error())
	case json.Unmarshal(body, &m) != nil || req.Header.Get(pushsig.MessageIDHeader) != m.ID:
		r.bad = append(r.bad, "envelope or message ID header wrong: "+string(body))
	case req.Header.Get("Content-Type") != "application/json" || req.Header.Get("X-Team") != "blue":
		r.bad = append(r.bad, "headers wrong")
	}
	r.envelopes = append(r.envelopes, &m)
	r.parents = append(r.parents, req.Header.Get("traceparent"))
	resp := r.responses[min(len(r.envelopes), len(r.responses))-1]
	r.mu.Unlock()
	r.got <- &m
	w.WriteHeader(resp.status)
	io.WriteString(w, resp.body)
}

// check fails the test for any request whose signature did not verify.
func (r *receiver) check(tb testing.TB) {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.bad {
		tb.Errorf("push refused by the receiver: %s", b)
	}
}

// pushSkill is testSkill delivering by push to url.
func pushSkill(url string) *mcpgate.Skill {
	sk := testSkill()
	sk.Delivery, sk.PushURL, sk.PushSecret, sk.AllowPrivate = mcpgate.DeliveryPush, url, "${env:PUSH_SECRET}", true
	sk.Headers = map[string]string{"X-Team": "${env:TEAM}"}
	return sk
}

// newPushBackend returns a backend over bus with the test secret in its
// environment and short retry waits.
func newPushBackend(bus *fakeBus) *Backend {
	env := map[string]string{"PUSH_SECRET": testSecret, "TEAM": "blue"}
	return New(&Options{Bus: bus, Channels: bus, PushBackoff: 10 * time.Millisecond,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
}

func TestPushReplyInResponse(t *testing.T) {
	tests := []struct {
		name      string
		responses []cannedResponse
		wantText  string
		wantError bool
		attempts  int
	}{
		{"reply", []cannedResponse{{200, `{"type":"agent_reply","body":{"text":"pushed hi"}}`}}, "pushed hi", false, 1},
		{"error reply", []cannedResponse{{200, `{"type":"agent_error","body":{"text":"cannot"}}`}}, "cannot", true, 1},
		{"retried after 500 and 429", []cannedResponse{{500, "oops"}, {429, ""}, {201, `{"type":"agent_reply","body":{"text":"third time"}}`}}, "third time", false, 3},
		{"not a reply", []cannedResponse{{200, `{"ok":true}`}}, "not a reply", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newFakeBus()
			bus.online = false // push needs no inbox stream
			rcv := newReceiver(t, tt.responses...)
			res, err := newPushBackend(bus).CallTool(context.Background(), chatCall(pushSkill(rcv.srv.URL), `{"message":"hi"}`, "", alice))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text(res), tt.wantText) || res.IsError != tt.wantError {
				t.Errorf("result = %+v, want text %q, isError %v", res, tt.wantText, tt.wantError)
			}
			rcv.check(t)
			if len(rcv.envelopes) != tt.attempts || rcv.envelopes[0].Body.Text != "hi" {
				t.Errorf("envelopes = %+v, want %d of the chat message", rcv.envelopes, tt.attempts)
			}
			chat := rcv.envelopes[0]
			if !bus.acked[chat.ID] {
				t.Errorf("pushed message %s not acknowledged", chat.ID)
			}
			reply := bus.wait(t, func(m *mcpgate.Message) bool { return m.Type.Final() })
			if reply.InReplyTo != chat.ID || reply.Sender != "agent:helper" {
				t.Errorf("stored reply = %+v", reply)
			}
		})
	}
}

func TestPushAcceptedThenReplyThroughAPI(t *testing.T) {
	bus := newFakeBus()
	rcv := newReceiver(t, cannedResponse{202, ""})
	b := newPushBackend(bus)
	done := start(b, context.Background(), chatCall(pushSkill(rcv.srv.URL), `{"message":"later"}`, "", alice))
	chat := <-rcv.got
	mustPost(t, bus, chat, mcpgate.MessageReply, mcpgate.MessageBody{Text: "as promised"})
	if got := <-done; got.err != nil || text(got.res) != "as promised" {
		t.Fatalf("CallTool = %+v, %v", got.res, got.err)
	}
	rcv.check(t)
}

func TestPushCancel(t *testing.T) {
	bus := newFakeBus()
	rcv := newReceiver(t, cannedResponse{204, ""})
	ctx, cancel := context.WithCancel(context.Background())
	done := start(newPushBackend(bus), ctx, chatCall(pushSkill(rcv.srv.URL), `{"message":"slow"}`, "", alice))
	chat := <-rcv.got
	cancel()
	if got := <-done; mcpgate.ErrorCode(got.err) != mcpgate.ECANCELED {
		t.Fatalf("err = %v, want ECANCELED", got.err)
	}
	c := <-rcv.got
	if c.Type != mcpgate.MessageCancel || c.InReplyTo != chat.ID {
		t.Errorf("second envelope = %+v, want a cancel of %s", c, chat.ID)
	}
	rcv.check(t)
}

func TestPushOfflineAtOnce(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	bus := newFakeBus()
	sk := pushSkill(url)
	sk.Timeout = mcpgate.Duration(time.Minute)
	start := time.Now()
	_, err := newPushBackend(bus).CallTool(context.Background(), chatCall(sk, `{"message":"hi"}`, "", alice))
	if mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE {
		t.Fatalf("err = %v, want EUNAVAILABLE", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("offline took %s", d)
	}
}

func TestPushMisconfigured(t *testing.T) {
	tests := []struct {
		name string
		edit func(*mcpgate.Skill)
		want string
	}{
		{"no secret", func(sk *mcpgate.Skill) { sk.PushSecret = "" }, "no push_secret"},
		{"unset secret", func(sk *mcpgate.Skill) { sk.PushSecret = "${env:NOPE}" }, "NOPE is not set"},
		{"no url", func(sk *mcpgate.Skill) { sk.PushURL = "" }, "not an http or https URL"},
		{"loopback not allowed", func(sk *mcpgate.Skill) { sk.AllowPrivate = false }, "push_url refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newFakeBus()
			sk := pushSkill("http://127.0.0.1:1/push")
			tt.edit(sk)
			res, err := newPushBackend(bus).CallTool(context.Background(), chatCall(sk, `{"message":"hi"}`, "", alice))
			if err != nil || !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Fatalf("CallTool = %+v, %v; want an error result about %q", res, err, tt.want)
			}
		})
	}
}

// A push target that answered badly and then stops taking connections is
// gone: the call ends with EUNAVAILABLE, not at the skill's timeout.
func TestPushTargetGoneAfterRetry(t *testing.T) {
	var srv *httptest.Server
	var once sync.Once
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		once.Do(func() { go srv.Close() }) // nothing listens after this answer
	}))
	defer srv.Close()
	bus := newFakeBus()
	sk := pushSkill(srv.URL)
	sk.Timeout = mcpgate.Duration(time.Minute)
	_, err := newPushBackend(bus).CallTool(context.Background(), chatCall(sk, `{"message":"hi"}`, "", alice))
	if mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE {
		t.Fatalf("err = %v, want EUNAVAILABLE", err)
	}
}

// A connection the target does not accept within the dial timeout counts
// as unreachable, as a refused one does; a slow answer does not.
func TestUnreachableDialTimeout(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}
	if !unreachable(fmt.Errorf("push: %w", dial)) {
		t.Error("a dial timeout is not unreachable")
	}
	read := &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}
	if unreachable(fmt.Errorf("push: %w", read)) {
		t.Error("a read timeout is unreachable")
	}
}

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// A pushed chat_message carries the call's trace context in the envelope
// and as the W3C headers of the push request.
func TestPushCarriesTrace(t *testing.T) {
	bus := newFakeBus()
	bus.online = false
	rcv := newReceiver(t, cannedResponse{200, `{"type":"agent_reply","body":{"text":"ok"}}`})
	call := chatCall(pushSkill(rcv.srv.URL), `{"message":"hi"}`, "", alice)
	call.Trace = mcpgate.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	if _, err := newPushBackend(bus).CallTool(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	rcv.check(t)
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.envelopes) != 1 || rcv.envelopes[0].Trace != call.Trace || rcv.parents[0] != call.Trace.Parent {
		t.Errorf("pushed envelope trace %+v, header %q; want %+v", rcv.envelopes[0].Trace, rcv.parents[0], call.Trace)
	}
}
