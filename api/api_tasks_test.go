package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/tasks"
)

// echoCalls answers every call with its arguments.
type echoCalls struct{}

func (echoCalls) Call(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent(string(call.Arguments))}}, nil
}

// taskIDs lists the IDs of the tasks a key sees.
func (f *apiFixture) taskIDs(tb testing.TB, key, query string) []string {
	tb.Helper()
	var out struct{ Tasks []*mcpgate.Task }
	f.call(tb, "GET", "/api/v1/tasks"+query, key, "").want(tb, http.StatusOK).decode(tb, &out)
	var ids []string
	for _, t := range out.Tasks {
		ids = append(ids, t.ID)
	}
	return ids
}

// TestTasksAPI starts tasks as a user and as an agent key, and holds who
// may start, read and list them.
func TestTasksAPI(t *testing.T) {
	f := mustAPIFixture(t)
	f.call(t, "POST", "/api/v1/agents/shop/tasks", f.alice, `{"tool":"echo"}`).want(t, http.StatusServiceUnavailable)
	svc := tasks.New(&tasks.Options{Store: f.store, Calls: echoCalls{}})
	t.Cleanup(func() { svc.Close() })
	f.srv.opts.Tasks = svc

	var created struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
	}
	r := f.call(t, "POST", "/api/v1/agents/shop/tasks", f.alice, `{"tool":"echo","arguments":{"a":1},"idempotency_key":"k1"}`).want(t, http.StatusAccepted)
	r.decode(t, &created)
	if created.Status != "working" || r.header.Get("Location") != "/api/v1/tasks/"+created.TaskID {
		t.Fatalf("created %+v, Location %q", created, r.header.Get("Location"))
	}
	byAlice := created.TaskID
	f.call(t, "POST", "/api/v1/agents/shop/tasks", f.shopKey, `{"tool":"echo"}`).want(t, http.StatusAccepted).decode(t, &created)
	byKey := created.TaskID

	f.call(t, "POST", "/api/v1/agents/shop/tasks", f.bob, `{"tool":"echo"}`).want(t, http.StatusNotFound)
	f.call(t, "POST", "/api/v1/agents/shop/tasks", f.alice, `{}`).wantError(t, http.StatusBadRequest, "invalid", "tool", "tool")
	f.call(t, "POST", "/api/v1/agents/shop/tasks", f.alice, `{"tool":"echo","arguments":[1]}`).wantError(t, http.StatusBadRequest, "invalid", "arguments", "object")

	var task mcpgate.Task
	f.call(t, "GET", "/api/v1/tasks/"+byAlice, f.alice, "").want(t, http.StatusOK).decode(t, &task)
	if task.IdempotencyKey != "k1" || task.Identity == "" {
		t.Errorf("task = %+v", task)
	}
	f.call(t, "GET", "/api/v1/tasks/"+byAlice, f.bob, "").want(t, http.StatusNotFound)
	f.call(t, "GET", "/api/v1/tasks/"+byAlice, f.shopKey, "").want(t, http.StatusNotFound) // another identity's
	f.call(t, "GET", "/api/v1/tasks/"+byKey, f.shopKey, "").want(t, http.StatusOK)
	f.call(t, "GET", "/api/v1/tasks/"+byKey, f.root, "").want(t, http.StatusOK)

	if ids := f.taskIDs(t, f.alice, ""); len(ids) != 2 {
		t.Errorf("alice lists %v; want both tasks of her agent", ids)
	}
	if ids := f.taskIDs(t, f.shopKey, ""); len(ids) != 1 || ids[0] != byKey {
		t.Errorf("the agent key lists %v; want only its own", ids)
	}
	if ids := f.taskIDs(t, f.bob, ""); len(ids) != 0 {
		t.Errorf("bob lists %v; want none", ids)
	}
	if ids := f.taskIDs(t, f.root, "?agent=shop&limit=1"); len(ids) != 1 {
		t.Errorf("root, one per page: %v", ids)
	}
	f.call(t, "GET", "/api/v1/tasks?status=maybe", f.alice, "").wantError(t, http.StatusBadRequest, "invalid", "status", "working")
}
