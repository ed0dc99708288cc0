package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		name     string
		prefix   string
		upstream []string
		want     []string
	}{
		{"kept", "", []string{"get_weather", "a.b-c"}, []string{"get_weather", "a.b-c"}},
		{"prefixed", "wx_", []string{"today"}, []string{"today"}},
		{"bad characters", "", []string{"files/read", "über"}, []string{"files_read_" + hash8("files/read"), "__ber_" + hash8("über")}},
		{"too long", "", []string{long}, []string{strings.Repeat("x", 55) + "_" + hash8(long)}},
		{"too long with prefix", "search_", []string{long}, []string{strings.Repeat("x", 48) + "_" + hash8(long)}},
		{"clash after cleaning", "", []string{"a_b", "a/b"}, []string{"a_b", "a_b_" + hash8("a/b")}},
		{"empty", "", []string{""}, []string{"tool_" + hash8("")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := toolNames(tc.prefix, tc.upstream)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("toolNames (-want +got):\n%s", diff)
			}
			if again := toolNames(tc.prefix, tc.upstream); !cmp.Equal(got, again) {
				t.Errorf("not deterministic: %v then %v", got, again)
			}
			for _, n := range got {
				if err := mcpgate.ValidToolName(tc.prefix + n); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// hash8 is the suffix toolNames adds for a seed.
func hash8(seed string) string { return hashed("", seed, 64)[1:] }

func TestDiscoverEveryPageRaw(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "paged", Version: "1"}, &sdk.ServerOptions{PageSize: 2})
	s.AddTool(&sdk.Tool{
		Name: "rich", Title: "Rich tool", Description: "Has everything.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","x-custom":1}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations:  &sdk.ToolAnnotations{ReadOnlyHint: true},
		Icons:        []sdk.Icon{{Source: "https://example.test/i.png", MIMEType: "image/png"}},
		Meta:         sdk.Meta{"vendor/x": "y"},
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	for i := range 4 {
		textTool(s, fmt.Sprintf("t%d", i), `{"content":[]}`)
	}
	textTool(s, "files/read", `{"content":[]}`)
	u := mustUpstream(t, s, nil)
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	sk.Prefix = "up_"
	tools, err := m.Discover(context.Background(), sk)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var rich *mcpgate.Tool
	for _, tool := range tools {
		names = append(names, tool.Name+"="+tool.Upstream)
		if tool.Name == "rich" {
			rich = tool
		}
	}
	want := []string{"files_read_" + hash8("files/read") + "=files/read", "rich=rich", "t0=t0", "t1=t1", "t2=t2", "t3=t3"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	got := map[string]string{
		"title": rich.Title, "description": rich.Description, "input": string(rich.InputSchema), "output": string(rich.OutputSchema),
		"annotations": string(rich.Annotations), "icons": string(rich.Icons), "meta": string(rich.Meta),
	}
	wantRich := map[string]string{
		"title": "Rich tool", "description": "Has everything.",
		"input":       `{"type":"object","properties":{"q":{"type":"string","x-custom":1}}}`,
		"output":      `{"type":"object"}`,
		"annotations": `{"idempotentHint":false,"readOnlyHint":true}`, // as the go-sdk server encodes it
		"icons":       `[{"src":"https://example.test/i.png","mimeType":"image/png"}]`,
		"meta":        `{"vendor/x":"y"}`,
	}
	if diff := cmp.Diff(wantRich, got); diff != "" {
		t.Errorf("rich tool (-want +got):\n%s", diff)
	}
}

func TestSyncDiscoversAndFollowsListChanged(t *testing.T) {
	s := newServer()
	textTool(s, "one", `{"content":[]}`)
	u := mustUpstream(t, s, nil)
	sk := httpSkill("s1", u.url())
	store := newMemStore(sk)
	var changed atomic.Int32
	m := newManager(t, store, newSessions(), func(context.Context) { changed.Add(1) })
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "first discovery", func() bool { return changed.Load() == 1 })
	if got := len(store.tools("agent1", "s1")); got != 1 {
		t.Fatalf("%d tools saved, want 1", got)
	}
	textTool(s, "two", `{"content":[]}`)
	waitFor(t, "rediscovery after list_changed", func() bool { return changed.Load() == 2 })
	if got := len(store.tools("agent1", "s1")); got != 2 {
		t.Fatalf("%d tools saved, want 2", got)
	}
	// Syncing the saved skill (same settings, new tools) keeps the link.
	m.mu.Lock()
	before := m.links[linkKey{"agent1", "s1"}]
	m.mu.Unlock()
	saved, _ := store.FindSkill(context.Background(), "agent1", "s1")
	m.Sync(context.Background(), []*mcpgate.Skill{saved})
	m.mu.Lock()
	after := m.links[linkKey{"agent1", "s1"}]
	m.mu.Unlock()
	if before != after {
		t.Error("Sync restarted a link whose settings did not change")
	}
}

func TestListChangedStormCoalesces(t *testing.T) {
	var lists atomic.Int32
	s := newServer()
	s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	textTool(s, "one", `{"content":[]}`)
	u := mustUpstream(t, s, nil)
	sk := httpSkill("s1", u.url())
	store := newMemStore(sk)
	var changed atomic.Int32
	m := newManager(t, store, nil, func(context.Context) { changed.Add(1) })
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "first discovery", func() bool { return changed.Load() == 1 })
	m.mu.Lock()
	l := m.links[linkKey{"agent1", "s1"}]
	m.mu.Unlock()
	for range 1000 {
		l.toolsChanged()
	}
	// A real change after the storm: once it is saved, every discovery the
	// storm caused has run.
	textTool(s, "two", `{"content":[]}`)
	waitFor(t, "the change saved", func() bool { return changed.Load() == 2 })
	if n := lists.Load(); n > 4 {
		t.Errorf("%d tools/list calls for 1000 list_changed notifications and one change; want them coalesced", n)
	}
}
