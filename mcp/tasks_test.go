package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// fakeTasks keeps tasks in memory; the test ends them with finish.
type fakeTasks struct {
	mu      sync.Mutex
	tasks   map[string]*mcpgate.Task
	calls   []*mcpgate.Call
	changed chan struct{} // closed and replaced on every change
}

func newFakeTasks() *fakeTasks {
	return &fakeTasks{tasks: map[string]*mcpgate.Task{}, changed: make(chan struct{})}
}

func (f *fakeTasks) Start(_ context.Context, call *mcpgate.Call, ttl time.Duration) (*mcpgate.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ttl == 0 {
		ttl = time.Hour
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t := &mcpgate.Task{ID: fmt.Sprintf("task_%d", len(f.tasks)+1), AgentID: call.Agent.ID, Tool: call.ToolName,
		Identity: call.Caller.Identity, Status: mcpgate.TaskWorking, CreatedAt: now, UpdatedAt: now, TTL: ttl}
	f.tasks[t.ID], f.calls = t, append(f.calls, call)
	copied := *t
	return &copied, nil
}

func (f *fakeTasks) Get(_ context.Context, id string) (*mcpgate.Task, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tasks[id]
	if t == nil {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "task %q not found", id)
	}
	copied := *t
	return &copied, nil
}

func (f *fakeTasks) Wait(ctx context.Context, id string) (*mcpgate.Task, error) {
	for {
		f.mu.Lock()
		changed := f.changed
		f.mu.Unlock()
		t, err := f.Get(ctx, id)
		if err != nil || t.Status.Terminal() {
			return t, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, mcpgate.Errorf(mcpgate.ECANCELED, "canceled")
		}
	}
}

func (f *fakeTasks) List(_ context.Context, flt mcpgate.TaskFilter) ([]*mcpgate.Task, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []*mcpgate.Task{}
	for _, t := range f.tasks {
		if t.Identity == flt.Identity && t.AgentID == flt.AgentID {
			out = append(out, t)
		}
	}
	return out, "", nil
}

func (f *fakeTasks) Cancel(ctx context.Context, id string) (*mcpgate.Task, error) {
	t, err := f.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return t, mcpgate.Errorf(mcpgate.ECONFLICT, "ended")
	}
	return f.finish(id, mcpgate.TaskEnd{Status: mcpgate.TaskCancelled}), nil
}

func (f *fakeTasks) PollInterval() time.Duration { return 500 * time.Millisecond }

// finish ends a task.
func (f *fakeTasks) finish(id string, e mcpgate.TaskEnd) *mcpgate.Task {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tasks[id]
	t.Status, t.Result, t.ErrorCode, t.Error = e.Status, e.Result, e.ErrorCode, e.Error
	close(f.changed)
	f.changed = make(chan struct{})
	copied := *t
	return &copied
}

// mustTaskHarness returns a harness with tasks on and one tool listed.
func mustTaskHarness(t *testing.T) (*harness, *fakeTasks) {
	tasks := newFakeTasks()
	h := mustHarness(t, &Options{Tasks: tasks})
	h.gw.tools = []ListedTool{{Name: "echo", JSON: json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)}}
	return h, tasks
}

func TestTasksOnlyFor20251125(t *testing.T) {
	h, _ := mustTaskHarness(t)
	for version, want := range map[string]bool{"2025-11-25": true, "2025-06-18": false} {
		resp := h.do(t, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{}}}`})
		init := mustRead(t, resp)
		if got := strings.Contains(init, `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`); got != want {
			t.Errorf("%s: tasks capability %v, want %v: %s", version, got, want, init)
		}
		list := h.mustRawRPC(t, resp.Header.Get("Mcp-Session-Id"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if got := strings.Contains(list, `"execution":{"taskSupport":"optional"}`); got != want {
			t.Errorf("%s: taskSupport listed %v, want %v: %s", version, got, want, list)
		}
	}
}

func TestTaskAugmentedCall(t *testing.T) {
	h, tasks := mustTaskHarness(t)
	sid := h.mustInit(t, "2025-11-25", nil)
	r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"task":{"ttl":5000}}}`)
	task, _ := r["result"].(map[string]any)["task"].(map[string]any)
	if task["taskId"] != "task_1" || task["status"] != "working" || task["ttl"] != 5000.0 || task["pollInterval"] != 500.0 || task["createdAt"] == nil {
		t.Fatalf("CreateTaskResult = %v", r)
	}
	if c := tasks.calls[0]; c.SessionID != sid || c.Caller.Identity != "user:alice" || string(c.Arguments) != `{"a":1}` {
		t.Errorf("call = %+v", c)
	}
	old := h.mustInit(t, "2025-06-18", nil)
	r = h.mustRPC(t, old, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"task":{}}}`)
	if _, ok := r["result"].(map[string]any)["content"]; !ok || len(tasks.calls) != 1 {
		t.Errorf("a task member on 2025-06-18 must be ignored: %v", r)
	}
	if r := h.mustRPC(t, old, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"task_1"}}`); errCode(r) != -32601 {
		t.Errorf("tasks/get on 2025-06-18: %v", r)
	}
	if r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","task":5}}`); errCode(r) != -32602 {
		t.Errorf("a task that is not an object: %v", r)
	}
	if r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","task":null}}`); r["result"].(map[string]any)["content"] == nil {
		t.Errorf("a null task must run the call at once: %v", r)
	}
}

func TestTaskResultWaits(t *testing.T) {
	h, tasks := mustTaskHarness(t)
	sid := h.mustInit(t, "2025-11-25", nil)
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}`)
	other := h.mustInit(t, "2025-11-25", nil) // another connection of the same caller
	done := h.async(t, req{session: other, body: `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"task_1"}}`,
		header: map[string]string{"Accept": "application/json"}})
	tasks.finish("task_1", mcpgate.TaskEnd{Status: mcpgate.TaskCompleted, Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"_meta":{"x":1}}`)})
	resp := <-done
	if resp == nil {
		t.FailNow()
	}
	defer resp.Body.Close()
	got := mustRead(t, resp)
	want := `{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"task_1"},"x":1},"content":[{"type":"text","text":"hi"}]}}`
	diff(t, "tasks/result", want, got)
	r := h.mustRPC(t, other, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"task_1"}}`)
	if res := r["result"].(map[string]any); res["status"] != "completed" || res["pollInterval"] != nil {
		t.Errorf("tasks/get after the end: %v", r)
	}
}

func TestTaskResultOfAnError(t *testing.T) {
	h, tasks := mustTaskHarness(t)
	sid := h.mustInit(t, "2025-11-25", nil)
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}`)
	tasks.finish("task_1", mcpgate.TaskEnd{Status: mcpgate.TaskFailed, ErrorCode: mcpgate.ETIMEOUT, Error: "the tool took too long"})
	r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"task_1"}}`)
	if errCode(r) != codeTimeout || !strings.Contains(fmt.Sprint(r["error"]), "the tool took too long") {
		t.Errorf("tasks/result of a timed-out task: %v", r)
	}
}

func TestTasksScopedToIdentity(t *testing.T) {
	h, _ := mustTaskHarness(t)
	sid := h.mustInit(t, "2025-11-25", nil)
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}`)
	bob := map[string]string{"X-Test-Identity": "bob"}
	bobSID := h.mustInit(t, "2025-11-25", bob)
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
		resp := h.do(t, req{session: bobSID, header: bob, body: `{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":{"taskId":"task_1"}}`})
		if r := mustJSON(t, mustRead(t, resp)); resp.StatusCode != http.StatusOK || errCode(r) != -32602 {
			t.Errorf("bob's %s of alice's task: %v", method, r)
		}
	}
	resp := h.do(t, req{session: bobSID, header: bob, body: `{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`})
	if got := mustRead(t, resp); !strings.Contains(got, `"tasks":[]`) {
		t.Errorf("bob's tasks/list: %s", got)
	}
	r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`)
	if list := r["result"].(map[string]any)["tasks"].([]any); len(list) != 1 {
		t.Errorf("alice's tasks/list: %v", r)
	}
}

func TestTaskCancel(t *testing.T) {
	h, _ := mustTaskHarness(t)
	sid := h.mustInit(t, "2025-11-25", nil)
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}`)
	r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"task_1"}}`)
	if r["result"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("tasks/cancel: %v", r)
	}
	if r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"task_1"}}`); errCode(r) != -32602 {
		t.Errorf("cancel a cancelled task: %v", r)
	}
	if r := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{}}`); errCode(r) != -32602 {
		t.Errorf("tasks/get without a taskId: %v", r)
	}
}
