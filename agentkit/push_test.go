package agentkit

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pushsig"
)

var pushSecret = []byte("push-secret")

// pushed is the answer of a push receiver.
type pushed struct {
	status int
	reply  outgoing
}

// mustPush POSTs m to url signed with secret at t.
func mustPush(tb testing.TB, url string, secret []byte, t time.Time, m *mcpgate.Message) pushed {
	tb.Helper()
	body, _ := json.Marshal(m)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(pushsig.MessageIDHeader, m.ID)
	req.Header.Set(pushsig.Header, pushsig.Sign(secret, t, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	p := pushed{status: resp.StatusCode}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &p.reply); err != nil {
			tb.Fatalf("push answer %s: %v", b, err)
		}
	}
	return p
}

// pushMessage returns a chat message as the gateway pushes it.
func pushMessage(id, text string) *mcpgate.Message {
	m := chat(text)
	m.ID, m.Seq, m.ChannelID = id, 1, "ch_p"
	return m
}

func TestPushSignature(t *testing.T) {
	srv := httptest.NewServer(PushHandler(pushSecret, func(ctx context.Context, req *Request) error {
		return req.Reply(ctx, &Reply{Text: "re: " + req.Text(), Data: map[string]bool{"ok": true}})
	}))
	defer srv.Close()
	now := time.Now()
	tests := []struct {
		name   string
		secret []byte
		at     time.Time
		want   int
	}{
		{"valid", pushSecret, now, http.StatusOK},
		{"wrong secret", []byte("other"), now, http.StatusUnauthorized},
		{"six minutes old", pushSecret, now.Add(-6 * time.Minute), http.StatusUnauthorized},
		{"four minutes old", pushSecret, now.Add(-4 * time.Minute), http.StatusOK},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustPush(t, srv.URL, tt.secret, tt.at, pushMessage("msg_"+string(rune('a'+i)), "hi"))
			if got.status != tt.want {
				t.Fatalf("status %d, want %d", got.status, tt.want)
			}
			if tt.want == http.StatusOK {
				want := outgoing{Type: mcpgate.MessageReply, InReplyTo: "msg_" + string(rune('a'+i)), Body: mcpgate.MessageBody{Text: "re: hi", Data: json.RawMessage(`{"ok":true}`)}}
				if diff := cmp.Diff(want, got.reply); diff != "" {
					t.Errorf("reply (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestPushUnsignedAndMethod(t *testing.T) {
	srv := httptest.NewServer(PushHandler(pushSecret, func(context.Context, *Request) error { return nil }))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"id":"msg_1","type":"chat_message"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: %d", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
}

func TestPushErrorAnswer(t *testing.T) {
	srv := httptest.NewServer(PushHandler(pushSecret, func(context.Context, *Request) error { return errors.New("cannot") }))
	defer srv.Close()
	got := mustPush(t, srv.URL, pushSecret, time.Now(), pushMessage("msg_e", "x"))
	if got.status != http.StatusOK || got.reply.Type != mcpgate.MessageError || got.reply.Body.Text != "cannot" {
		t.Errorf("answer %+v", got)
	}
}

// TestPushLateReply checks that a reply slower than PushWait is answered
// 202 and posted through the messages API, with a delta on the way, and
// that a duplicate push is answered 202 without running the handler again.
func TestPushLateReply(t *testing.T) {
	g := newFakeGateway(t)
	release, runs := make(chan struct{}), make(chan string, 10)
	w := New(Options{URL: g.srv.URL, Key: testKey, PushWait: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	w.Handle(func(ctx context.Context, req *Request) error {
		runs <- req.ID()
		if err := req.Delta("working"); err != nil {
			return err
		}
		<-release
		return req.Reply(ctx, Text("late"))
	})
	srv := httptest.NewServer(w.PushHandler(pushSecret))
	defer srv.Close()
	m := pushMessage("msg_l", "slow")
	if got := mustPush(t, srv.URL, pushSecret, time.Now(), m); got.status != http.StatusAccepted {
		t.Fatalf("status %d, want 202", got.status)
	}
	if got := mustPush(t, srv.URL, pushSecret, time.Now(), m); got.status != http.StatusAccepted {
		t.Fatalf("duplicate: status %d, want 202", got.status)
	}
	close(release)
	got := []string{text(mustReceive(t, g.posted)), text(mustReceive(t, g.posted))}
	if diff := cmp.Diff([]string{"agent_reply_delta msg_l working", "agent_reply msg_l late"}, got); diff != "" {
		t.Errorf("posted (-want +got):\n%s", diff)
	}
	mustReceive(t, runs)
	mustNotReceive(t, runs)
}

func TestPushCancel(t *testing.T) {
	started, cancelled := make(chan struct{}, 1), make(chan error, 1)
	srv := httptest.NewServer(PushHandler(pushSecret, func(ctx context.Context, req *Request) error {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- ctx.Err()
		return ctx.Err()
	}))
	defer srv.Close()
	m := pushMessage("msg_c", "long")
	answered := make(chan pushed, 1)
	go func() { answered <- mustPush(t, srv.URL, pushSecret, time.Now(), m) }()
	mustReceive(t, started)
	c := &mcpgate.Message{ID: "msg_x", Type: mcpgate.MessageCancel, InReplyTo: m.ID, ChannelID: m.ChannelID}
	if got := mustPush(t, srv.URL, pushSecret, time.Now(), c); got.status != http.StatusNoContent {
		t.Errorf("cancel: status %d", got.status)
	}
	if err := mustReceive(t, cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("handler ctx: %v", err)
	}
	if got := mustReceive(t, answered); got.status != http.StatusAccepted {
		t.Errorf("cancelled chat: status %d, want 202", got.status)
	}
}
