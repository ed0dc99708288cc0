package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TaskRunner runs tools/calls as background tasks (package tasks).
type TaskRunner interface {
	// Start stores a task for call and runs it in the background.
	Start(ctx context.Context, call *mcpgate.Call, ttl time.Duration) (*mcpgate.Task, error)
	// Get returns a task; ENOTFOUND if unknown or expired.
	Get(ctx context.Context, id string) (*mcpgate.Task, error)
	// List returns a page of the tasks f selects and the next cursor.
	List(ctx context.Context, f mcpgate.TaskFilter) ([]*mcpgate.Task, string, error)
	// Cancel cancels an unfinished task; ECONFLICT when it had ended.
	Cancel(ctx context.Context, id string) (*mcpgate.Task, error)
}

// taskRequest is the body of POST /api/v1/agents/{id}/tasks.
type taskRequest struct {
	Tool           string          `json:"tool"`
	Arguments      json.RawMessage `json:"arguments"`
	IdempotencyKey string          `json:"idempotency_key"`
	// TTLMS is how long the task is kept, in milliseconds; 0 is the
	// default (a day).
	TTLMS int64 `json:"ttl_ms"`
}

// tasksReady returns EUNAVAILABLE when the gateway runs no tasks.
func (s *Server) tasksReady() error {
	if s.opts.Tasks == nil {
		return &apiError{Err: mcpgate.Errorf(mcpgate.EUNAVAILABLE, "this gateway runs no tasks"), Status: http.StatusServiceUnavailable}
	}
	return nil
}

// handleTaskCreate starts a task: the tool call runs through the same
// pipeline as a tools/call from the agent's MCP endpoint, with the same
// authorization, and the answer is 202 with the task's ID at once.
func (s *Server) handleTaskCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.tasksReady(); err != nil {
		return err
	}
	var req taskRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	call, err := s.taskCall(r.Context(), c, r.PathValue("id"), &req)
	if err != nil {
		return err
	}
	t, err := s.opts.Tasks.Start(r.Context(), call, time.Duration(req.TTLMS)*time.Millisecond)
	if err != nil {
		return err
	}
	w.Header().Set("Location", apiPrefix+"/tasks/"+t.ID)
	writeJSON(w, http.StatusAccepted, map[string]any{"task_id": t.ID, "status": t.Status})
	return nil
}

// taskCall checks a task request and returns its call: the caller must
// be allowed to call the agent's tools as on its MCP endpoint.
func (s *Server) taskCall(ctx context.Context, c *caller, agentID string, req *taskRequest) (*mcpgate.Call, error) {
	if req.Tool == "" {
		return nil, fieldErrorf(mcpgate.EINVALID, "tool", "tool, the name of one of the agent's tools, is required")
	}
	if req.TTLMS < 0 {
		return nil, fieldErrorf(mcpgate.EINVALID, "ttl_ms", "ttl_ms must not be negative")
	}
	args, err := taskArguments(req.Arguments, req.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	a, err := s.opts.Store.FindAgent(ctx, agentID)
	if err != nil {
		return nil, err
	}
	if err := c.cred.Authorize(a); err != nil {
		return nil, err
	}
	return &mcpgate.Call{Agent: a, ToolName: req.Tool, Arguments: args, Caller: c.cred.Caller(), Notifier: mcpgate.NopNotifier{}}, nil
}

// taskArguments returns the call's arguments ({} when absent), with the
// idempotency key put where the pipeline takes it from.
func taskArguments(raw json.RawMessage, key string) (json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil || args == nil {
			return nil, fieldErrorf(mcpgate.EINVALID, "arguments", "arguments must be a JSON object")
		}
	}
	if key != "" {
		args["idempotency_key"], _ = json.Marshal(key)
	}
	return json.Marshal(args)
}

// handleTaskGet returns a task the caller may see, with its result once
// it has one.
func (s *Server) handleTaskGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := s.visibleTask(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// handleTaskCancel cancels a task the caller may see; one that ended
// already is 409.
func (s *Server) handleTaskCancel(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := s.visibleTask(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if t, err = s.opts.Tasks.Cancel(r.Context(), t.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// visibleTask returns a task the caller may see: admins see every task,
// users the tasks of the agents they own, and anyone the tasks it
// started. Any other is 404.
func (s *Server) visibleTask(ctx context.Context, c *caller, id string) (*mcpgate.Task, error) {
	if err := s.tasksReady(); err != nil {
		return nil, err
	}
	t, err := s.opts.Tasks.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.isAdmin() || t.Identity == c.cred.Identity() {
		return t, nil
	}
	if c.cred.Kind == mcpgate.CredentialUserKey {
		if _, err := s.readAgent(ctx, c, t.AgentID); err == nil {
			return t, nil
		}
	}
	return nil, notFound("task", id)
}

// handleTaskList lists the tasks the caller may see, newest first, a page
// at a time: ?agent, ?status, ?cursor and ?limit narrow it.
func (s *Server) handleTaskList(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.tasksReady(); err != nil {
		return err
	}
	f, err := taskFilter(c, r.URL.Query())
	if err != nil {
		return err
	}
	tasks, next, err := s.opts.Tasks.List(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": tasks, "next_cursor": next})
	return nil
}

// taskFilter reads the list's query and limits it to what c may see.
func taskFilter(c *caller, q map[string][]string) (mcpgate.TaskFilter, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	f := mcpgate.TaskFilter{AgentID: get("agent"), Status: mcpgate.TaskStatus(get("status")), Cursor: get("cursor")}
	if f.Status != "" && !f.Status.Valid() {
		return f, fieldErrorf(mcpgate.EINVALID, "status", "status must be working, input_required, completed, failed or cancelled")
	}
	var err error
	if f.Limit, err = queryLimit(get("limit")); err != nil {
		return f, err
	}
	switch {
	case c.isAdmin():
	case c.cred.Kind == mcpgate.CredentialUserKey:
		f.OwnerID, f.Identity = c.user.ID, c.cred.Identity()
	default:
		f.Identity = c.cred.Identity()
	}
	return f, nil
}
