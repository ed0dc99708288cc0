package upstream

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingServe starts the fixture over Streamable HTTP with mode, its
// -stateless flag, and returns its endpoint.
func everythingServe(t *testing.T, mode string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(everythingBin, "-http="+addr, mode)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "the fixture listening", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/mcp"
}

// The revision negotiated with each upstream is in the skill's health:
// the stateless one with a server that offers it, 2025-11-25 with one
// that keeps sessions.
func TestHealthShowsRevision(t *testing.T) {
	for mode, want := range map[string]string{"-stateless=true": "2026-07-28", "-stateless=false": "2025-11-25"} {
		t.Run(mode, func(t *testing.T) {
			sk := httpSkill("fixture", everythingServe(t, mode))
			store := newMemStore(sk)
			m := newManager(t, store, nil, nil)
			m.Sync(context.Background(), []*mcpgate.Skill{sk})
			waitFor(t, "connected", func() bool { return store.healthOf("agent1", "fixture").State == mcpgate.HealthConnected })
			if got := store.healthOf("agent1", "fixture").ProtocolVersion; got != want {
				t.Errorf("protocol version %q, want %q", got, want)
			}
			res, err := m.CallTool(context.Background(), callOf(sk, "test_simple_text", `{}`))
			if err != nil || res.IsError {
				t.Fatalf("test_simple_text: %v %+v", err, res)
			}
		})
	}
}

// A stateless upstream's InputRequiredResult reaches the MCP host of an
// older revision as the elicitation, sampling or roots request it stands
// for, and the host's answers go back with the retry; a host without the
// capability gets an error, not the upstream's question.
func TestStatelessInputBridged(t *testing.T) {
	sk := httpSkill("fixture", everythingServe(t, "-stateless=true"))
	store := newMemStore(sk)
	m := newManager(t, store, nil, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected", func() bool { return store.healthOf("agent1", "fixture").State == mcpgate.HealthConnected })

	host := &client{caps: `{"elicitation":{},"sampling":{},"roots":{}}`, answer: func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		switch method {
		case "elicitation/create":
			return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
		case "sampling/createMessage":
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"}`), nil
		}
		return json.RawMessage(`{"roots":[{"uri":"file:///tmp","name":"tmp"}]}`), nil
	}}
	for tool, want := range map[string]string{
		"test_input_required_result_elicitation":     "Hello, Ada!",
		"test_input_required_result_sampling":        "Paris",
		"test_input_required_result_list_roots":      "file:///tmp",
		"test_input_required_result_multiple_inputs": "Ada",
		"test_input_required_result_multi_round":     "Ada",
	} {
		call := callOf(sk, tool, `{}`)
		call.SessionID, call.Client = "s1", host
		res, err := m.CallTool(context.Background(), call)
		if err != nil || res.IsError || !strings.Contains(string(res.Raw), want) {
			t.Errorf("%s: %v %s, want %q", tool, err, resRaw(res), want)
		}
	}

	call := callOf(sk, "test_input_required_result_elicitation", `{}`)
	call.SessionID, call.Client = "s2", &client{caps: `{}`}
	if res, err := m.CallTool(context.Background(), call); err == nil {
		t.Errorf("a host without elicitation got %s", res.Raw)
	}
}

// resRaw is a result's bytes, or nothing.
func resRaw(r *mcpgate.Result) string {
	if r == nil {
		return ""
	}
	return string(r.Raw)
}

// A stateless upstream's list changes arrive on the link's
// subscriptions/listen stream: a prompts change reaches the agent's
// sessions and a tools change a new discovery.
func TestStatelessListen(t *testing.T) {
	sk := httpSkill("fixture", everythingServe(t, "-stateless=true"))
	store := newMemStore(sk)
	ss := newSessions()
	m := newManager(t, store, ss, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected", func() bool { return store.healthOf("agent1", "fixture").State == mcpgate.HealthConnected })
	before := len(store.tools("agent1", "fixture"))
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		// The listen stream may not be open yet: trigger until heard.
		if _, err := m.CallTool(context.Background(), callOf(sk, "test_trigger_prompt_change", `{}`)); err != nil {
			t.Fatal(err)
		}
		select {
		case msg := <-ss.ch:
			if !strings.Contains(msg, "prompts/list_changed") {
				t.Fatalf("notification %s", msg)
			}
			if _, err := m.CallTool(context.Background(), callOf(sk, "test_trigger_tool_change", `{}`)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "rediscovery", func() bool { return len(store.tools("agent1", "fixture")) != before })
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatal("no prompts/list_changed reached the sessions")
}

// Each parameter an inputSchema marks with x-mcp-header goes to a
// stateless upstream as its Mcp-Param header too: a number as written, a
// string with other than visible ASCII in the base64 form, nested ones
// by their own annotation; null and absent ones not at all.
func TestParamHeaders(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"gone":{"type":"string","x-mcp-header":"Gone"},
		"nested":{"type":"object","properties":{"city":{"type":"string","x-mcp-header":"City"}}}}}`)
	opts := withParamHeaders(nil, schema, json.RawMessage(`{"region":"eu-west","n":10,"gone":null,"nested":{"city":"Zürich"}}`))
	want := map[string]string{"Mcp-Param-Region": "eu-west", "Mcp-Param-N": "10", "Mcp-Param-City": "=?base64?WsO8cmljaA==?="}
	for k, v := range want {
		if got := opts.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if len(opts.Header) != len(want) {
		t.Errorf("headers %v", opts.Header)
	}
	if withParamHeaders(nil, json.RawMessage(`{"type":"object"}`), json.RawMessage(`{}`)) != nil {
		t.Error("a tool without x-mcp-header got options")
	}
}

// A stateless upstream's listing is relayed from the cache while its
// ttlMs lasts, and asked for again once the upstream says the list
// changed.
func TestStatelessListingCache(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "cached", Version: "1"}, &sdk.ServerOptions{
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.TTLMs = 60000 },
	})
	srv.AddResource(&sdk.Resource{URI: "test://one", Name: "one"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{}, nil
	})
	var lists atomic.Int32
	u := mustUpstreamWith(t, srv, &sdk.StreamableHTTPOptions{Stateless: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "resources/list" {
				lists.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	sk := httpSkill("cached", u.url())
	store := newMemStore(sk)
	m := newManager(t, store, newSessions(), nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected", func() bool { return store.healthOf("agent1", "cached").ProtocolVersion == "2026-07-28" })
	for range 3 {
		mustContain(t, "resources/list", mustRelay(t, m, forward("resources/list", `{}`)), "test://one")
	}
	if n := lists.Load(); n != 1 {
		t.Fatalf("%d resources/list requests upstream within the ttl, want 1", n)
	}
	// The listen stream may open after the first change: change until
	// the listing is asked for again.
	for i := 0; lists.Load() == 1 && i < 100; i++ {
		srv.AddResource(&sdk.Resource{URI: "test://more", Name: "more"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{}, nil
		})
		time.Sleep(50 * time.Millisecond)
		mustRelay(t, m, forward("resources/list", `{}`))
	}
	if !strings.Contains(mustRelay(t, m, forward("resources/list", `{}`)), "test://more") {
		t.Error("the listing was not asked for again after list_changed")
	}
}

// A downstream session's resources/subscribe, which a stateless upstream
// does not have, becomes a URI of the link's subscriptions/listen, and the
// upstream's resources/updated reaches the session that subscribed.
func TestStatelessSubscription(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "subs", Version: "1"}, &sdk.ServerOptions{
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	srv.AddResource(&sdk.Resource{URI: "file:///doc.txt", Name: "doc"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "file:///doc.txt", Text: "doc"}}}, nil
	})
	u := mustUpstreamWith(t, srv, &sdk.StreamableHTTPOptions{Stateless: true}, nil)
	sk := httpSkill("subs", u.url())
	store := newMemStore(sk)
	ss := newSessions()
	m := newManager(t, store, ss, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected", func() bool { return store.healthOf("agent1", "subs").ProtocolVersion == "2026-07-28" })
	mustRelay(t, m, forward("resources/subscribe", `{"uri":"file:///doc.txt"}`))
	for i := 0; i < 100; i++ {
		// The listen request asking for the URI may not be open yet.
		if err := srv.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: "file:///doc.txt"}); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-ss.ch:
			if strings.Contains(got, "resources/updated") {
				mustContain(t, "notification", got, "session sess-1 notifications/resources/updated", `"uri":"file:///doc.txt"`)
				return
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("no resources/updated reached the subscribed session")
}

// A stateless upstream that goes away is noticed on the link's
// subscriptions/listen stream: the health says error, and once the
// upstream is back the link connects again.
func TestStatelessUpstreamRestart(t *testing.T) {
	srv := newServer()
	textTool(srv, "ok", `{"content":[{"type":"text","text":"ok"}]}`)
	u := mustUpstreamWith(t, srv, &sdk.StreamableHTTPOptions{Stateless: true}, nil)
	sk := httpSkill("flaky", u.url())
	store := newMemStore(sk)
	m := newManager(t, store, nil, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected", func() bool { return store.healthOf("agent1", "flaky").ProtocolVersion == "2026-07-28" })
	addr := u.addr
	u.stop()
	waitFor(t, "error", func() bool { return store.healthOf("agent1", "flaky").State == mcpgate.HealthError })
	u.start(addr)
	waitFor(t, "connected again", func() bool { return store.healthOf("agent1", "flaky").State == mcpgate.HealthConnected })
	if res, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil || res.IsError {
		t.Fatalf("after the restart: %v", err)
	}
}
