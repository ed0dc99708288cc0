package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTaskCancelReachesUpstream starts a relayed tool as an MCP task and
// cancels it with tasks/cancel: the upstream MCP server sees its request
// cancelled (the gateway's client sends notifications/cancelled).
func TestTaskCancelReachesUpstream(t *testing.T) {
	started, canceled := make(chan struct{}), make(chan struct{})
	up := sdk.NewServer(&sdk.Implementation{Name: "slow-upstream", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		close(canceled)
		return nil, ctx.Err()
	})
	url := serveUpstream(t, up, func(*http.Request) {})
	g := mustStartMain(t, strings.ReplaceAll(relayConfig, "UPSTREAM", url))
	_, key := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "relay", bearer(key), "2025-11-25")
	eventually(t, "the upstream's tool listed", func() bool { return listsTool(t, s, "block") })
	r := s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{},"task":{"ttl":60000}}}`, nil)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(r.rpc.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("task-augmented tools/call: %s", r.body)
	}
	waitClosed(t, started, "the upstream call")
	r = s.post(t, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"`+created.Task.TaskID+`"}}`, nil)
	if !strings.Contains(string(r.rpc.Result), `"status":"cancelled"`) {
		t.Fatalf("tasks/cancel: %s", r.body)
	}
	waitClosed(t, canceled, "the upstream's cancellation")
}

// waitClosed waits for ch to be closed, failing after a minute.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("never saw %s", what)
	}
}
