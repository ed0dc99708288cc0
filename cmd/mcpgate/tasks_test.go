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

// TestTaskCancelReachesUpstream starts relayed tools as MCP tasks: one
// completes, and its session hears notifications/tasks/status on its GET
// stream; one is cancelled with tasks/cancel, and the upstream MCP server
// sees its request cancelled (the gateway's client sends
// notifications/cancelled).
func TestTaskCancelReachesUpstream(t *testing.T) {
	started, canceled := make(chan struct{}), make(chan struct{})
	up := sdk.NewServer(&sdk.Implementation{Name: "slow-upstream", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		close(canceled)
		return nil, ctx.Err()
	})
	up.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echoed"}}}, nil
	})
	url := serveUpstream(t, up, func(*http.Request) {})
	g := mustStartMain(t, strings.ReplaceAll(relayConfig, "UPSTREAM", url))
	_, key := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "relay", bearer(key), "2025-11-25")
	eventually(t, "the upstream's tool listed", func() bool { return listsTool(t, s, "block") })
	events := openGetStream(t, s)
	echo := startTask(t, s, "echo")
	waitStatus(t, events, echo, "completed")
	if r := s.post(t, `{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+echo+`"}}`, nil); !strings.Contains(string(r.rpc.Result), "echoed") {
		t.Fatalf("tasks/result: %s", r.body)
	}

	block := startTask(t, s, "block")
	waitClosed(t, started, "the upstream call")
	r := s.post(t, `{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":"`+block+`"}}`, nil)
	if !strings.Contains(string(r.rpc.Result), `"status":"cancelled"`) {
		t.Fatalf("tasks/cancel: %s", r.body)
	}
	waitClosed(t, canceled, "the upstream's cancellation")
	waitStatus(t, events, block, "cancelled")
}

// startTask runs tool as an MCP task in s and returns the task's ID.
func startTask(t *testing.T, s *session, tool string) string {
	t.Helper()
	r := s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{},"task":{"ttl":60000}}}`, nil)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if json.Unmarshal(r.rpc.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("task-augmented tools/call: %s", r.body)
	}
	return created.Task.TaskID
}

// waitStatus waits for notifications/tasks/status of the task with status
// on a GET stream.
func waitStatus(t *testing.T, events <-chan sseEvent, taskID, status string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the GET stream ended before the %s status of %s", status, taskID)
			}
			if strings.Contains(ev.Data, `"notifications/tasks/status"`) && strings.Contains(ev.Data, taskID) && strings.Contains(ev.Data, `"status":"`+status+`"`) {
				return
			}
		case <-timeout:
			t.Fatalf("no notifications/tasks/status %s for %s", status, taskID)
		}
	}
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
