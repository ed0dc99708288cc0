package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Start stores a task for call and runs the call in the background,
// detached from ctx: call.Agent, ToolName, Arguments, Caller and
// SessionID say what to run for whom. ttl is how long the task is kept (0
// means DefaultTTL; at most MaxTTL). A call whose arguments carry an
// idempotency_key that an unexpired task of the same caller and agent
// holds does not start again: that task is returned, or EMISMATCH when its
// arguments differed.
func (s *Service) Start(ctx context.Context, call *mcpgate.Call, ttl time.Duration) (*mcpgate.Task, error) {
	t, err := s.newTask(call, ttl)
	if err != nil {
		return nil, err
	}
	if t.IdempotencyKey != "" {
		if held, err := s.held(ctx, t); held != nil || err != nil {
			return held, err
		}
	}
	if err := s.opts.Store.CreateTask(ctx, t); err != nil {
		return nil, err
	}
	s.launch(t, call)
	return t, nil
}

// newTask returns the task row of call, not yet stored.
func (s *Service) newTask(call *mcpgate.Call, ttl time.Duration) (*mcpgate.Task, error) {
	hash, err := mcpgate.HashArguments(call.ToolName, call.Arguments)
	if err != nil {
		return nil, err
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	c := call.Caller
	return &mcpgate.Task{
		AgentID: call.Agent.ID, Tool: call.ToolName, Identity: c.Identity, UserID: c.UserID,
		CredentialKind: c.Kind, CredentialID: c.CredentialID, SessionID: call.SessionID,
		ArgsHash: hash, IdempotencyKey: idempotencyKey(call.Arguments),
		CreatedAt: s.opts.Now(), TTL: min(ttl, MaxTTL).Round(time.Millisecond), Runner: s.runner,
	}, nil
}

// held returns the task that already holds t's idempotency key; nil when
// none does.
func (s *Service) held(ctx context.Context, t *mcpgate.Task) (*mcpgate.Task, error) {
	held, err := s.opts.Store.FindTaskByKey(ctx, t.Identity, t.AgentID, t.IdempotencyKey, s.opts.Now())
	switch {
	case mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND:
		return nil, nil
	case err != nil:
		return nil, err
	case held.ArgsHash != t.ArgsHash:
		return nil, mcpgate.Errorf(mcpgate.EMISMATCH, "idempotency key %q was used for task %s of another tool or with other arguments; use a new key for a different call", t.IdempotencyKey, held.ID)
	}
	return held, nil
}

// idempotencyKey returns the arguments' idempotency_key when it is a
// string; "" otherwise.
func idempotencyKey(args json.RawMessage) string {
	var a struct {
		Key any `json:"idempotency_key"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	key, _ := a.Key.(string)
	return key
}

// launch runs call as task t on a goroutine of its own, under a context
// that Cancel and Close end.
func (s *Service) launch(t *mcpgate.Task, call *mcpgate.Call) {
	ctx, cancel := context.WithCancel(s.base)
	r := &run{cancel: cancel, done: make(chan struct{})}
	detached := *call
	detached.Notifier, detached.Client = &notifier{s: s, task: t}, nil
	s.mu.Lock()
	closed := s.closed // Close is waiting for the runs: none may start now
	if !closed {
		s.running[t.ID] = r
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closed {
		cancel()
		s.end(t, call.Agent.OwnerID, outcome(ctx, nil, nil))
		return
	}
	go func() {
		defer s.wg.Done()
		defer s.forget(t.ID, r)
		res, err := s.opts.Calls.Call(ctx, &detached)
		s.end(t, call.Agent.OwnerID, outcome(ctx, res, err))
	}()
}

// forget drops a run that ended.
func (s *Service) forget(id string, r *run) {
	s.mu.Lock()
	delete(s.running, id)
	s.mu.Unlock()
	r.cancel()
	close(r.done)
}

// outcome turns what the call returned into how its task ends.
func outcome(ctx context.Context, res *mcpgate.Result, err error) mcpgate.TaskEnd {
	switch {
	case ctx.Err() != nil:
		return mcpgate.TaskEnd{Status: mcpgate.TaskFailed, Message: "the gateway shut down while the task ran",
			ErrorCode: mcpgate.EUNAVAILABLE, Error: "the gateway shut down while the task ran"}
	case err != nil:
		return failure(err)
	case res == nil:
		return failure(fmt.Errorf("the gateway returned neither result nor error"))
	}
	body, err := res.MarshalJSON()
	if err != nil {
		return failure(fmt.Errorf("encode result: %w", err))
	}
	if isError(res, body) {
		return mcpgate.TaskEnd{Status: mcpgate.TaskFailed, Message: "the tool returned an error result", Result: body}
	}
	return mcpgate.TaskEnd{Status: mcpgate.TaskCompleted, Result: body}
}

// failure is how a task ends whose call returned err. Internal errors keep
// their details out of the task, as the MCP edge does.
func failure(err error) mcpgate.TaskEnd {
	code, msg := mcpgate.ErrorCode(err), mcpgate.ErrorMessage(err)
	if code == mcpgate.EINTERNAL {
		msg = "internal error"
	}
	return mcpgate.TaskEnd{Status: mcpgate.TaskFailed, Message: msg, ErrorCode: code, Error: msg}
}

// isError reports whether a result is a tool failure; a relayed one says
// so in its JSON.
func isError(res *mcpgate.Result, body []byte) bool {
	if len(res.Raw) == 0 {
		return res.IsError
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(body, &r) == nil && r.IsError
}
