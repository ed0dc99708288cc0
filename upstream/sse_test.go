//lint:file-ignore SA1019 Upstream log messages are part of MCP 2025-11-25, the revision relayed here.

package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollingServer has a tool "poll" that closes its reply stream twice
// (SEP-1699), reporting progress before, between and after, and a tool
// "ok". It keeps its events, so a client can resume.
func pollingServer() *sdk.Server {
	s := newServer()
	s.AddTool(&sdk.Tool{Name: "poll", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		progress := func(p float64) {
			req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: p, Total: 3})
		}
		progress(1)
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		progress(2)
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		progress(3)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "polled"}}}, nil
	})
	textTool(s, "ok", `{"content":[{"type":"text","text":"ok"}]}`)
	return s
}

// countSessions counts the requests that open an upstream session (those
// without Mcp-Session-Id), and refuses resumption GETs when refuse is set.
func countSessions(opened *atomic.Int32, refuse *atomic.Bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The client's server/discover probe, which this upstream
			// (sessions only) refuses, opens none.
			if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("Mcp-Method") != "server/discover" {
				opened.Add(1)
			}
			if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" && refuse.Load() {
				http.Error(w, "replay refused", http.StatusBadRequest)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// pausingNotifier records progress and the pauses asked of the client.
type pausingNotifier struct {
	notifier
	pmu    sync.Mutex
	pauses []time.Duration
}

func (n *pausingNotifier) PauseStream(retry time.Duration) {
	n.pmu.Lock()
	defer n.pmu.Unlock()
	n.pauses = append(n.pauses, retry)
}

func TestResumesStreamTheUpstreamClosed(t *testing.T) {
	var opened atomic.Int32
	var refuse atomic.Bool
	u := mustUpstreamWith(t, pollingServer(), &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)}, countSessions(&opened, &refuse))
	m := newManager(t, nil, nil, nil)
	call := callOf(httpSkill("s1", u.url()), "poll", `{}`)
	n := &pausingNotifier{}
	call.Notifier = n
	res, err := m.CallTool(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "result", string(res.Raw), `"polled"`)
	n.mu.Lock()
	if diff := cmp.Diff([]float64{1, 2, 3}, n.progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	n.mu.Unlock()
	n.pmu.Lock()
	if len(n.pauses) == 0 || n.pauses[0] != 10*time.Millisecond {
		t.Errorf("pauses asked of the client = %v, want the upstream's 10ms first", n.pauses)
	}
	n.pmu.Unlock()
	if _, err := m.CallTool(context.Background(), callOf(httpSkill("s1", u.url()), "ok", `{}`)); err != nil {
		t.Fatal(err)
	}
	if got := opened.Load(); got != 1 {
		t.Errorf("the upstream saw %d sessions opened, want 1: resuming must not cost the session", got)
	}
}

func TestResumeRefusedFailsOnlyTheCall(t *testing.T) {
	var opened atomic.Int32
	var refuse atomic.Bool
	refuse.Store(true)
	u := mustUpstreamWith(t, pollingServer(), &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)}, countSessions(&opened, &refuse))
	m := newManager(t, nil, nil, nil)
	sk := httpSkill("s1", u.url())
	_, err := m.CallTool(context.Background(), callOf(sk, "poll", `{}`))
	mustCode(t, err, mcpgate.EUNAVAILABLE)
	mustContain(t, "error", mcpgate.ErrorMessage(err), "resuming it failed", "HTTP 400", "replay refused")
	if _, err := m.CallTool(context.Background(), callOf(sk, "ok", `{}`)); err != nil {
		t.Fatalf("the next call: %v", err)
	}
	if got := opened.Load(); got != 1 {
		t.Errorf("the upstream saw %d sessions opened, want 1", got)
	}
}

func TestRelayedReadPassesLogsAndPause(t *testing.T) {
	s := newServer()
	s.AddResource(&sdk.Resource{URI: "test://slow", Name: "slow"}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Data: "reading"})
		req.Extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "slow text"}}}, nil
	})
	u := mustUpstreamWith(t, s, &sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)}, nil)
	sk := httpSkill("s1", u.url())
	store := newMemStore(sk)
	m := newManager(t, store, nil, nil)
	m.Sync(context.Background(), []*mcpgate.Skill{sk})
	waitFor(t, "connected", func() bool { return store.healthOf("agent1", "s1").State == mcpgate.HealthConnected })

	f := forward("resources/read", `{"uri":"test://slow"}`)
	n := &pausingNotifier{}
	f.Notifier = n
	mustContain(t, "resources/read", mustRelay(t, m, f), `"slow text"`)
	n.mu.Lock()
	if diff := cmp.Diff([]string{`warning "reading"`}, n.logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
	n.mu.Unlock()
	n.pmu.Lock()
	defer n.pmu.Unlock()
	if diff := cmp.Diff([]time.Duration{10 * time.Millisecond}, n.pauses); diff != "" {
		t.Errorf("pauses (-want +got):\n%s", diff)
	}
}
