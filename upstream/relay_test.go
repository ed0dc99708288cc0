package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// forward returns a relayed request of the agent.
func forward(method, params string) *mcpgate.Forward {
	return &mcpgate.Forward{Agent: &mcpgate.Agent{ID: "agent1"}, Method: method, Params: json.RawMessage(params),
		SessionID: "sess-1", Notifier: mcpgate.NopNotifier{}}
}

// mustRelay relays and fails on error.
func mustRelay(tb testing.TB, m *Manager, f *mcpgate.Forward) string {
	tb.Helper()
	raw, err := m.Relay(context.Background(), f)
	if err != nil {
		tb.Fatalf("%s: %v", f.Method, err)
	}
	return string(raw)
}

func TestRelayEverythingServer(t *testing.T) {
	sk := stdioSkill("everything")
	store := newMemStore(sk)
	m := newManager(t, store, nil, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected", func() bool { return store.healthOf("agent1", "everything").State == mcpgate.HealthConnected })

	caps := m.Capabilities("agent1")
	got := map[string]string{}
	for k, v := range caps {
		got[k] = string(v)
	}
	want := map[string]string{"resources": `{"listChanged":true,"subscribe":true}`, "prompts": `{"listChanged":true}`, "completions": `{}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Capabilities (-want +got):\n%s", diff)
	}

	mustContain(t, "resources/list", mustRelay(t, m, forward("resources/list", `{}`)), `"uri":"test://static-text"`, `"uri":"test://watched-resource"`)
	mustContain(t, "resources/templates/list", mustRelay(t, m, forward("resources/templates/list", `{}`)), `"uriTemplate":"test://template/{id}/data"`)
	mustContain(t, "resources/read", mustRelay(t, m, forward("resources/read", `{"uri":"test://static-text"}`)), `"contents"`, `test://static-text`)
	mustContain(t, "prompts/list", mustRelay(t, m, forward("prompts/list", `{}`)), `"name":"test_simple_prompt"`)
	mustContain(t, "prompts/get", mustRelay(t, m, forward("prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}}`)), `"messages"`)
	mustContain(t, "completion/complete", mustRelay(t, m, forward("completion/complete", `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"x"}}`)), `"completion"`)

	_, err := m.Relay(context.Background(), forward("prompts/get", `{"name":"nope"}`))
	var rpc *mcpgate.RPCError
	if !errorsAs(err, &rpc) {
		t.Errorf("unknown prompt: err = %v, want the upstream's JSON-RPC error", err)
	}
	_, err = m.Relay(context.Background(), forward("tools/frobnicate", `{}`))
	mustCode(t, err, mcpgate.ENOTFOUND)
}

// resourceServer offers a prompt and a resource under shared names.
func resourceServer(tag string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: tag, Version: "1"}, &sdk.ServerOptions{
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
	})
	s.AddPrompt(&sdk.Prompt{Name: "greet"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello from " + tag}}}}, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "only_" + tag}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "only " + tag}}}}, nil
	})
	s.AddResource(&sdk.Resource{Name: "doc", URI: "file:///doc.txt"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "doc of " + tag}}}, nil
	})
	return s
}

func TestRelayNamespacesClashes(t *testing.T) {
	a, b := resourceServer("a"), resourceServer("b")
	ua, ub := mustUpstream(t, a, nil), mustUpstream(t, b, nil)
	ska, skb := httpSkill("sa", ua.url()), httpSkill("sb", ub.url())
	store := newMemStore(ska, skb)
	ss := newSessions()
	m := newManager(t, store, ss, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{ska, skb})
	waitFor(t, "both connected", func() bool {
		return store.healthOf("agent1", "sa").State == mcpgate.HealthConnected && store.healthOf("agent1", "sb").State == mcpgate.HealthConnected
	})

	prompts := mustRelay(t, m, forward("prompts/list", `{}`))
	mustContain(t, "prompts/list", prompts, `"name":"sa.greet"`, `"name":"sb.greet"`, `"name":"only_a"`, `"name":"only_b"`)
	mustContain(t, "prompts/get sb.greet", mustRelay(t, m, forward("prompts/get", `{"name":"sb.greet"}`)), "hello from b")
	mustContain(t, "prompts/get only_a", mustRelay(t, m, forward("prompts/get", `{"name":"only_a"}`)), "only a")

	resources := mustRelay(t, m, forward("resources/list", `{}`))
	mustContain(t, "resources/list", resources, `"uri":"mcpgate:sa/file:///doc.txt"`, `"uri":"mcpgate:sb/file:///doc.txt"`)
	mustContain(t, "resources/read", mustRelay(t, m, forward("resources/read", `{"uri":"mcpgate:sb/file:///doc.txt"}`)), "doc of b")

	// A subscription follows the namespaced URI back to its session.
	mustRelay(t, m, forward("resources/subscribe", `{"uri":"mcpgate:sb/file:///doc.txt"}`))
	if err := b.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: "file:///doc.txt"}); err != nil {
		t.Fatal(err)
	}
	got := <-ss.ch
	mustContain(t, "notification", got, "session sess-1 notifications/resources/updated", `"uri":"mcpgate:sb/file:///doc.txt"`)

	// Once the session ends, the upstream is unsubscribed.
	m.CloseSession("sess-1")
	l := m.linkNamed("agent1", "sb")
	waitFor(t, "subscriptions dropped", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.subs) == 0
	})

	// A prompts list_changed reaches the agent's sessions.
	a.AddPrompt(&sdk.Prompt{Name: "late"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{}, nil
	})
	for msg := range ss.ch {
		if strings.Contains(msg, "agent agent1 notifications/prompts/list_changed") {
			break
		}
	}
}
