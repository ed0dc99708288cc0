package tasks

import (
	"context"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Get returns one task; ENOTFOUND if unknown or expired.
func (s *Service) Get(ctx context.Context, id string) (*mcpgate.Task, error) {
	t, err := s.opts.Store.FindTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if !s.opts.Now().Before(t.ExpiresAt) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "task %q has expired", id)
	}
	return t, nil
}

// List returns the tasks f selects, newest first, and the next page's
// cursor.
func (s *Service) List(ctx context.Context, f mcpgate.TaskFilter) ([]*mcpgate.Task, string, error) {
	return s.opts.Store.ListTasks(ctx, f)
}

// Wait returns the task once it has ended, or ctx's error when ctx ends
// first. A task this process runs is waited for until its run has
// recorded and told its end; another replica's is read every
// PollInterval.
func (s *Service) Wait(ctx context.Context, id string) (*mcpgate.Task, error) {
	for {
		local := s.localRun(id)
		if local != nil {
			if err := s.waitFor(ctx, id, local.done); err != nil {
				return nil, err
			}
		}
		t, err := s.Get(ctx, id)
		if err != nil || t.Status.Terminal() {
			return t, err
		}
		if local == nil {
			if err := s.waitFor(ctx, id, nil); err != nil {
				return nil, err
			}
		}
	}
}

// localRun returns this process's run of the task; nil when none.
func (s *Service) localRun(id string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[id]
}

// waitFor waits until done is closed, or one poll interval when done is
// nil; ECANCELED when ctx ends first.
func (s *Service) waitFor(ctx context.Context, id string, done <-chan struct{}) error {
	var tick <-chan time.Time
	if done == nil {
		timer := time.NewTimer(s.opts.PollInterval)
		defer timer.Stop()
		tick = timer.C
	}
	select {
	case <-ctx.Done():
		return mcpgate.Errorf(mcpgate.ECANCELED, "waiting for task %s was cancelled", id)
	case <-done:
	case <-tick:
	}
	return nil
}

// Cancel moves an unfinished task to cancelled, then cancels its call:
// the backend sees its context end (a REST request is cut, an upstream MCP
// server gets notifications/cancelled, an agent's wait ends). A task run
// by another replica is cancelled there within its heartbeat. ECONFLICT,
// with the task, when it had ended already; ENOTFOUND when unknown.
func (s *Service) Cancel(ctx context.Context, id string) (*mcpgate.Task, error) {
	t, err := s.opts.Store.FinishTask(ctx, id, mcpgate.TaskEnd{Status: mcpgate.TaskCancelled,
		Message: "The task was cancelled by request.", At: s.opts.Now()})
	if err != nil {
		return t, err
	}
	s.cancelRun(id)
	s.ended(ctx, t, s.owner(ctx, t.AgentID))
	return t, nil
}

// cancelRun cancels the local run of a task, if any.
func (s *Service) cancelRun(id string) {
	if r := s.localRun(id); r != nil {
		r.cancel()
	}
}
