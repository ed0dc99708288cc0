package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// A push target that redirects to another origin does not get the skill's
// headers there: they may hold the operator's secrets (${env:…}) meant for
// the push_url's server only. A redirect within the origin keeps them.
func TestPushRedirectDropsSkillHeaders(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	final := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/end-same", http.StatusTemporaryRedirect)
			return
		}
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("X-Team")
		mu.Unlock()
		w.Write([]byte(`{"type":"agent_reply","body":{"text":"redirected"}}`))
	}))
	defer final.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final.URL+"/end-other", http.StatusTemporaryRedirect)
	}))
	defer other.Close()
	tests := []struct {
		name, pushURL, end, want string
	}{
		{"another origin", other.URL, "/end-other", ""},
		{"same origin", final.URL + "/same", "/end-same", "blue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := newFakeBus()
			res, err := newPushBackend(bus).CallTool(context.Background(), chatCall(pushSkill(tt.pushURL), `{"message":"hi"}`, "", alice))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text(res), "redirected") {
				t.Fatalf("result = %+v", res)
			}
			mu.Lock()
			got, ok := seen[tt.end]
			mu.Unlock()
			if !ok || got != tt.want {
				t.Errorf("X-Team at %s = %q (reached %v), want %q", tt.end, got, ok, tt.want)
			}
		})
	}
}

// A call that times out tells the agent with a cancel message, which
// acknowledges the chat message: a worker that comes back later does not
// get a question nobody waits for.
func TestTimeoutPostsCancel(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	sk := testSkill()
	sk.Timeout = mcpgate.Duration(50 * time.Millisecond)
	_, err := b.CallTool(context.Background(), chatCall(sk, `{"message":"slow"}`, "", alice))
	if mcpgate.ErrorCode(err) != mcpgate.ETIMEOUT {
		t.Fatalf("err = %v, want ETIMEOUT", err)
	}
	chat := bus.wait(t, isChatTo("slow"))
	c := bus.wait(t, func(m *mcpgate.Message) bool { return m.Type == mcpgate.MessageCancel })
	if c.InReplyTo != chat.ID || c.ChannelID != chat.ChannelID {
		t.Errorf("cancel message = %+v, want in reply to %s", c, chat.ID)
	}
}
