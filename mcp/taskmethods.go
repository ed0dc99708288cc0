package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate"
)

// taskPageSize bounds a tasks/list page, each read from the store, to the
// size tools/list pages had before they grew to DefaultPageSize.
const taskPageSize = 100

// taskMethod serves tasks/get, tasks/list and tasks/cancel; handled is
// false for other methods.
func (s *Server) taskMethod(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, m *message) (result []byte, handled bool, err error) {
	if !s.tasksFor(ls.version) {
		return nil, false, nil
	}
	switch m.method {
	case "tasks/get":
		result, err = s.taskGet(ctx, ls, agent, m.Params)
	case "tasks/list":
		result, err = s.taskList(ctx, ls, agent, m.Params)
	case "tasks/cancel":
		result, err = s.taskCancel(ctx, ls, agent, m.Params)
	default:
		return nil, false, nil
	}
	return result, true, err
}

// ownTask returns the task params name, when it is the session's
// identity's on agent; any other is not found (-32602), as the spec asks.
func (s *Server) ownTask(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, params json.RawMessage) (*mcpgate.Task, error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: params.taskId, a task ID string, is required")
	}
	t, err := s.tasks.Get(ctx, p.TaskID)
	switch {
	case mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND || (err == nil && (t.Identity != ls.identity || t.AgentID != agent.ID)):
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Failed to retrieve task: task %q not found", p.TaskID)
	case err != nil:
		return nil, err
	}
	return t, nil
}

// taskGet serves tasks/get.
func (s *Server) taskGet(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, params json.RawMessage) ([]byte, error) {
	t, err := s.ownTask(ctx, ls, agent, params)
	if err != nil {
		return nil, err
	}
	return encodeTask(t, s.tasks.PollInterval(), false)
}

// taskCancel serves tasks/cancel: a task that ended already is -32602.
func (s *Server) taskCancel(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, params json.RawMessage) ([]byte, error) {
	t, err := s.ownTask(ctx, ls, agent, params)
	if err != nil {
		return nil, err
	}
	t, err = s.tasks.Cancel(ctx, t.ID)
	if mcpgate.ErrorCode(err) == mcpgate.ECONFLICT && t != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Cannot cancel task %s: it is %s already", t.ID, t.Status)
	} else if err != nil {
		return nil, err
	}
	return encodeTask(t, s.tasks.PollInterval(), false)
}

// taskList serves tasks/list: the tasks of the session's identity on the
// agent, newest first, a page at a time.
func (s *Server) taskList(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, params json.RawMessage) ([]byte, error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	tasks, next, err := s.tasks.List(ctx, mcpgate.TaskFilter{Identity: ls.identity, AgentID: agent.ID, Cursor: p.Cursor, Limit: min(s.pageSize, taskPageSize)})
	if err != nil {
		return nil, err
	}
	out := struct {
		Tasks      []wireTask `json:"tasks"`
		NextCursor string     `json:"nextCursor,omitempty"`
	}{Tasks: make([]wireTask, len(tasks)), NextCursor: next}
	for i, t := range tasks {
		out.Tasks[i] = toWire(t, s.tasks.PollInterval())
	}
	return json.Marshal(out)
}

// taskResult serves tasks/result: it waits until the task has ended, then
// answers what the tools/call would have answered, its result's _meta
// naming the task.
func (s *Server) taskResult(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, params json.RawMessage) ([]byte, error) {
	t, err := s.ownTask(ctx, ls, agent, params)
	if err != nil {
		return nil, err
	}
	if t, err = s.tasks.Wait(ctx, t.ID); err != nil {
		return nil, err
	}
	switch {
	case len(t.Result) > 0:
		return withRelatedTask(t.Result, t.ID)
	case t.Err() != nil:
		return nil, t.Err()
	}
	return nil, mcpgate.Errorf(mcpgate.ECANCELED, "task %s was %s", t.ID, t.Status)
}

// withRelatedTask adds the related-task key to a result's _meta.
func withRelatedTask(result json.RawMessage, taskID string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(result, &obj); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		meta = map[string]json.RawMessage{}
	}
	meta[relatedTaskKey], _ = json.Marshal(map[string]string{"taskId": taskID})
	obj["_meta"], _ = json.Marshal(meta)
	return json.Marshal(obj)
}

// taskParams is the task member of a task-augmented request.
type taskParams struct {
	TTL *float64 `json:"ttl"`
}

// parseTaskParams reads params.task: an object with an optional ttl in
// milliseconds.
func parseTaskParams(raw json.RawMessage) (time.Duration, error) {
	var p taskParams
	if firstByte(raw) != '{' || json.Unmarshal(raw, &p) != nil {
		return 0, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: params.task must be an object with an optional ttl in milliseconds")
	}
	if p.TTL == nil || *p.TTL <= 0 {
		return 0, nil
	}
	return time.Duration(*p.TTL * float64(time.Millisecond)), nil
}

// startTask runs a task-augmented tools/call: it answers a
// CreateTaskResult at once, the call running on as a task.
func (s *Server) startTask(ctx context.Context, call *mcpgate.Call, task json.RawMessage) ([]byte, error) {
	ttl, err := parseTaskParams(task)
	if err != nil {
		return nil, err
	}
	t, err := s.tasks.Start(ctx, call, ttl)
	if err != nil {
		return nil, err
	}
	return encodeTask(t, s.tasks.PollInterval(), true)
}

// runTaskResult runs tasks/result as runStreamed does: cancellable, since
// it waits for the task.
func (s *Server) runTaskResult(ls *liveSession, agent *mcpgate.Agent, m *message, reply *callReply) (resp []byte, cancelled bool) {
	if !s.tasksFor(ls.version) {
		err := methodNotFound(m.method)
		reply.log.err = err
		return s.errorResponse(ls, m, err), false
	}
	return s.runRequest(ls, m, reply, nil, func(ctx context.Context) ([]byte, error) {
		return s.taskResult(ctx, ls, agent, m.Params)
	})
}
