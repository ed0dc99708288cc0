package replicas

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testAgentElsewhere connects an agent worker to replica 1 and calls the
// agent's tool on replica 0: the message and the reply cross replicas.
func testAgentElsewhere(t *testing.T, e *env) {
	worker := filepath.Join(tools, "testagent")
	if err := buildOnce(worker, "github.com/mcpgate/mcpgate/e2e/testagent"); err != nil {
		t.Fatal(err)
	}
	agentKey := strings.TrimSpace(e.MustCLI(t, "key", "create", "--agent", "helper", "--name", "worker"))
	out := startProcessEnv(t, []string{"MCPGATE_AGENT_KEY=" + agentKey}, worker, "-url", e.Replica(1).URL)
	waitUntil(t, 60*time.Second, "the worker's inbox stream", func() bool {
		return strings.Contains(out.String(), "agentkit: inbox connected")
	})
	s := openRPC(t, e.URL+"/helper/mcp", e.key, `{}`)
	r := s.on(e, 0, "helper").post(`{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"name":"helper","arguments":{"message":"across replicas"}}}`)
	if r.Error != nil || !strings.Contains(string(r.Result), "across replicas") || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the call on replica 0 answered by the worker on replica 1: %s", r.Body)
	}
}

// testCancelElsewhere holds a gated call on replica 2 and sends
// notifications/cancelled for it to replica 0: the call ends, and its
// approval is withdrawn.
func testCancelElsewhere(t *testing.T, e *env) {
	s := openRPC(t, e.URL+"/tools/mcp", e.key, `{}`)
	done := make(chan *rpcReply, 1)
	go func() {
		done <- s.on(e, 2, "tools").post(`{"jsonrpc":"2.0","id":"x1","method":"tools/call","params":{"name":"gated_echo","arguments":{"text":"cancelled elsewhere"}}}`)
	}()
	waitUntil(t, 30*time.Second, "the pending approval", func() bool {
		return pendingApproval(t, e, "cancelled elsewhere") != ""
	})
	if r := s.on(e, 0, "tools").post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x1","reason":"changed my mind"}}`); r.Status != 202 {
		t.Fatalf("cancel on replica 0: HTTP %d %s", r.Status, r.Body)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the call on replica 2 still runs after a cancellation sent to replica 0")
	}
	waitUntil(t, 10*time.Second, "the approval withdrawn", func() bool {
		return pendingApproval(t, e, "cancelled elsewhere") == ""
	})
}
