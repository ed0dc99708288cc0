package replicas

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/sdkclient"
)

// TestReplicas starts three replicas behind the round-robin proxy once and
// runs every proof against them, in parallel: each subtest uses its own
// sessions, and the proxy sends each request to the next replica.
func TestReplicas(t *testing.T) {
	e := startEnv(t)
	waitServed(t, e, "everything")
	t.Run("group", func(t *testing.T) {
		t.Run("client", func(t *testing.T) { t.Parallel(); testClient(t, e) })
		t.Run("conformance", func(t *testing.T) { t.Parallel(); testConformance(t, e) })
		t.Run("elicitation", func(t *testing.T) { t.Parallel(); testElicitationElsewhere(t, e) })
		t.Run("resume", func(t *testing.T) { t.Parallel(); testResumeElsewhere(t, e) })
		t.Run("approval", func(t *testing.T) { t.Parallel(); testApprovalElsewhere(t, e) })
		t.Run("ratelimit", func(t *testing.T) { t.Parallel(); testSharedRateLimit(t, e) })
		t.Run("agent", func(t *testing.T) { t.Parallel(); testAgentElsewhere(t, e) })
		t.Run("cancel", func(t *testing.T) { t.Parallel(); testCancelElsewhere(t, e) })
		t.Run("notify", func(t *testing.T) { t.Parallel(); testNotifyElsewhere(t, e) })
		t.Run("listchanged", func(t *testing.T) { t.Parallel(); testListChangedElsewhere(t, e) })
		t.Run("dashboard", func(t *testing.T) { t.Parallel(); testDashboardElsewhere(t, e) })
	})
	// After the group, which sends requests to replica 0 directly.
	t.Run("handover", func(t *testing.T) { testHandOver(t, e) })
	t.Run("killed", func(t *testing.T) { testResumeAfterKill(t, e) })
}

// waitServed waits until agent's tools are listed on every replica (the
// relayed upstream's links connect in the background).
func waitServed(t *testing.T, e *env, agent string) {
	t.Helper()
	for _, r := range e.Replicas {
		waitUntil(t, 90*time.Second, "tools of "+agent+" on replica "+r.Addr, func() bool {
			return len(openRPC(t, r.URL+"/"+agent+"/mcp", e.key, "{}").toolNames()) > 0
		})
	}
}

// testClient runs the TS SDK client's full flow through the proxy:
// initialize, ping, tools/list, calls with progress, DELETE; each request
// may land on another replica.
func testClient(t *testing.T, e *env) {
	plan := map[string]any{"url": e.URL + "/tools/mcp", "headers": bearer(e.key), "delete": true,
		"calls": []sdkclient.Call{
			{Name: "echo", Arguments: map[string]any{"text": "one"}, Progress: true},
			{Name: "echo", Arguments: map[string]any{"text": "two"}},
			{Name: "echo", Arguments: map[string]any{"text": "three"}, Progress: true},
		}}
	var rep sdkclient.Report
	if !runNode(t, "client.mjs", plan, &rep) || rep.Error != nil {
		t.Fatalf("client: %+v", rep.Error)
	}
	for i, c := range rep.Calls {
		if c.Result == nil || c.Result.IsError || !strings.Contains(c.Result.Content[0].Text, []string{"one", "two", "three"}[i]) {
			t.Errorf("call %d: %+v %+v", i, c.Result, c.Error)
		}
	}
	if rep.SessionDelete != "ok" {
		t.Errorf("DELETE: %v", rep.SessionDelete)
	}
}
