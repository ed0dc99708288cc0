package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
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
	if !errors.As(err, &rpc) {
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
	got := mustUpdate(t, b, ss, "file:///doc.txt")
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

// templateServer offers resource templates (and resources) whose reads
// say which upstream answered, records subscriptions, and completes
// every argument with its tag.
func templateServer(tag string, subscribed chan<- string, templates []string, resources ...string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: tag, Version: "1"}, &sdk.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
			if subscribed != nil {
				subscribed <- tag + " " + req.Params.URI
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{tag + " completes " + req.Params.Ref.URI}}}, nil
		},
	})
	read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: tag + " read " + req.Params.URI}}}, nil
	}
	for _, t := range templates {
		s.AddResourceTemplate(&sdk.ResourceTemplate{Name: t, URITemplate: t}, read)
	}
	for _, r := range resources {
		s.AddResource(&sdk.Resource{Name: r, URI: r}, read)
	}
	return s
}

// mustSkills connects one mcp skill of agent1 to each server, named sa,
// sb and so on.
func mustSkills(tb testing.TB, ss mcpgate.SessionNotifier, servers ...*sdk.Server) *Manager {
	tb.Helper()
	var skills []*mcpgate.Skill
	for i, s := range servers {
		skills = append(skills, httpSkill("s"+string(rune('a'+i)), mustUpstream(tb, s, nil).url()))
	}
	store := newMemStore(skills...)
	m := newManager(tb, store, ss, nil)
	m.Sync(context.Background(), skills)
	waitFor(tb, "every skill connected", func() bool {
		for _, sk := range skills {
			if store.healthOf("agent1", sk.Name).State != mcpgate.HealthConnected {
				return false
			}
		}
		return true
	})
	return m
}

// relayRead reads a resource and returns its text, or the error's code.
func relayRead(tb testing.TB, m *Manager, uri string) string {
	tb.Helper()
	raw, err := m.Relay(context.Background(), forward("resources/read", string(mustJSON(map[string]string{"uri": uri}))))
	if err != nil {
		return mcpgate.ErrorCode(err)
	}
	var res sdk.ReadResourceResult
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Contents) != 1 {
		tb.Fatalf("resources/read %s = %s (%v)", uri, raw, err)
	}
	return res.Contents[0].Text
}

// With two skills, a URI goes to the skill listing it as a resource, else
// to the one listing the most specific template it expands; the first
// read lists the templates, and a template added later is found by
// listing again.
func TestRelayRoutesTemplatedURIs(t *testing.T) {
	subscribed := make(chan string, 10)
	a := templateServer("a", subscribed, []string{"test://template/{id}/data", "docs://{+path}"})
	b := templateServer("b", subscribed, []string{"docs://manual/{+page}", "search://s{?q,lang}"}, "test://template/fixed/data")
	m := mustSkills(t, nil, a, b)

	tests := []uriRead{
		{"test://template/123/data", "a read test://template/123/data"},
		{"test://template/fixed/data", "b read test://template/fixed/data"}, // a listed resource beats a template
		{"docs://manual/intro/1", "b read docs://manual/intro/1"},           // the longest literal prefix wins
		{"docs://guide/x", "a read docs://guide/x"},
		{"search://s?q=cat&lang=en", "b read search://s?q=cat&lang=en"},
		{"test://template/1/2/data", mcpgate.ENOTFOUND}, // a value never crosses "/"
		{"nothing://here", mcpgate.ENOTFOUND},
	}
	checkReads(t, m, tests)

	mustContain(t, "completion/complete", mustRelay(t, m, forward("completion/complete",
		`{"ref":{"type":"ref/resource","uri":"docs://manual/{+page}"},"argument":{"name":"page","value":"in"}}`)),
		"b completes docs://manual/{+page}")
	mustRelay(t, m, forward("resources/subscribe", `{"uri":"test://template/7/data"}`))
	if got := <-subscribed; got != "a test://template/7/data" {
		t.Errorf("subscribed %q, want a's test://template/7/data", got)
	}

	b.AddResourceTemplate(&sdk.ResourceTemplate{Name: "late", URITemplate: "late://{x}"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "b late"}}}, nil
	})
	if got := relayRead(t, m, "late://1"); got != "b late" {
		t.Errorf("read of a template listed since = %q, want b's", got)
	}
}

// A template two skills list is served namespaced: its expansions under
// mcpgate:<skill>/ reach that skill, the bare expansion is ambiguous.
func TestRelayTemplateClash(t *testing.T) {
	a := templateServer("a", nil, []string{"shared://{id}", "a://{id}"})
	b := templateServer("b", nil, []string{"shared://{id}"})
	m := mustSkills(t, nil, a, b)

	mustContain(t, "resources/templates/list", mustRelay(t, m, forward("resources/templates/list", `{}`)),
		`"uriTemplate":"mcpgate:sa/shared://{id}"`, `"uriTemplate":"mcpgate:sb/shared://{id}"`, `"uriTemplate":"a://{id}"`)
	tests := []uriRead{
		{"mcpgate:sb/shared://5", "b read shared://5"},
		{"mcpgate:sa/shared://5", "a read shared://5"},
		{"a://5", "a read a://5"},
		{"shared://5", mcpgate.ENOTFOUND},
	}
	checkReads(t, m, tests)
	mustContain(t, "completion/complete", mustRelay(t, m, forward("completion/complete",
		`{"ref":{"type":"ref/resource","uri":"mcpgate:sb/shared://{id}"},"argument":{"name":"id","value":"1"}}`)),
		"b completes shared://{id}")
}

// uriRead is a URI to read and the text, or error code, to get back.
type uriRead struct{ uri, want string }

// checkReads reads each URI through m.
func checkReads(t *testing.T, m *Manager, tests []uriRead) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			if got := relayRead(t, m, tt.uri); got != tt.want {
				t.Errorf("read = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSubResource(t *testing.T) {
	tests := []struct {
		uri, parent string
		want        bool
	}{
		{"file:///a/b", "file:///a", true},
		{"file:///a#part", "file:///a", true},
		{"file:///a?rev=2", "file:///a", true},
		{"file:///a/b", "file:///a/", true},
		{"file:///ab", "file:///a", false},
		{"file:///a", "file:///a", false}, // the same URI, not a sub-resource
		{"file:///b/a", "file:///a", false},
		{"file:///a", "file:///a/", false},
	}
	for _, tt := range tests {
		t.Run(tt.uri+" under "+tt.parent, func(t *testing.T) {
			if got := subResource(tt.uri, tt.parent); got != tt.want {
				t.Errorf("subResource = %v, want %v", got, tt.want)
			}
		})
	}
}

// An update reaches the sessions subscribed to its URI and those
// subscribed to a URI it is a sub-resource of, not those whose URI merely
// starts the same way.
func TestRelayUpdatesSubResources(t *testing.T) {
	s := templateServer("a", nil, []string{"file:///{+path}"})
	ss := newSessions()
	m := mustSkills(t, ss, s)
	subscribe := func(session, uri string) {
		f := forward("resources/subscribe", string(mustJSON(map[string]string{"uri": uri})))
		f.SessionID = session
		mustRelay(t, m, f)
	}
	subscribe("parent", "file:///a")
	subscribe("sibling", "file:///ab")
	subscribe("child", "file:///a/x")
	// Once a probe's update has come, the upstream's GET stream is open
	// and no update below can be dropped before it.
	subscribe("probe", "file:///probe")
	mustUpdate(t, s, ss, "file:///probe")

	updated := func(uri string) {
		if err := s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	// Updates arrive in order, so once the last one is in, every earlier
	// delivery has been made.
	updated("file:///ab")
	updated("file:///a/x")
	updated("file:///a")
	want := []string{
		`session sibling notifications/resources/updated {"uri":"file:///ab"}`,
		`session child notifications/resources/updated {"uri":"file:///a/x"}`,
		`session parent notifications/resources/updated {"uri":"file:///a/x"}`,
		`session parent notifications/resources/updated {"uri":"file:///a"}`,
	}
	var got []string
	for len(got) < len(want) {
		if msg := <-ss.ch; !strings.HasPrefix(msg, "session probe ") { // a late probe
			got = append(got, msg)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}
