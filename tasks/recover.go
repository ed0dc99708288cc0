package tasks

import (
	"context"
	"time"
)

// restarted is the reason a task cut off by a restart (or by the death of
// the replica that ran it) failed with.
const restarted = "the gateway restarted while the task ran"

// sweepBatch is how many expired tasks one sweep deletes at most.
const sweepBatch = 500

// sweepEvery is how many heartbeats pass between sweeps of expired tasks.
const sweepEvery = 12

// Run keeps the tasks honest until ctx ends: first it fails the tasks left
// unfinished by a process that is gone (Recover), then every Heartbeat it
// marks this process's tasks alive and cancels local runs of tasks
// cancelled on another replica, on a shared store fails the tasks whose
// runner stopped beating, and now and then deletes expired tasks.
func (s *Service) Run(ctx context.Context) {
	s.Recover(ctx)
	tick := time.NewTicker(s.opts.Heartbeat)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.beat(ctx, n%sweepEvery == 0)
		}
	}
}

// Recover fails the tasks left unfinished by processes that are gone: on
// a store of its own (SQLite) every other runner's, on a shared one those
// whose heartbeat is older than the lease.
func (s *Service) Recover(ctx context.Context) {
	before := s.opts.Now().Add(time.Second) // every heartbeat so far
	if s.opts.Shared {
		before = s.opts.Now().Add(-s.opts.Lease)
	}
	s.failStale(ctx, before)
}

// beat is one heartbeat. Only a shared store can gain another runner's
// stale tasks after Recover, and only this process's runs need a
// heartbeat, so a lone idle gateway writes nothing but the sweep.
func (s *Service) beat(ctx context.Context, sweep bool) {
	now := s.opts.Now()
	if len(s.runningIDs()) > 0 {
		if err := s.opts.Store.HeartbeatTasks(ctx, s.runner, now); err != nil {
			s.warn(ctx, "tasks: heartbeat", err)
		}
		s.cancelEnded(ctx)
	}
	if s.opts.Shared {
		s.failStale(ctx, now.Add(-s.opts.Lease))
	}
	if sweep {
		s.sweep(ctx, now)
	}
}

// sweep deletes expired tasks.
func (s *Service) sweep(ctx context.Context, now time.Time) {
	if n, err := s.opts.Store.DeleteExpiredTasks(ctx, now, sweepBatch); err != nil {
		s.warn(ctx, "tasks: sweep expired", err)
	} else if n > 0 {
		s.opts.Logger.Info("expired tasks removed", "count", n)
	}
}

// cancelEnded cancels the local runs of tasks that ended elsewhere
// (cancelled through another replica).
func (s *Service) cancelEnded(ctx context.Context) {
	for _, id := range s.runningIDs() {
		t, err := s.opts.Store.FindTask(ctx, id)
		if err == nil && t.Status.Terminal() {
			s.cancelRun(id)
		}
	}
}

// runningIDs returns the IDs of the tasks this process runs.
func (s *Service) runningIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.running))
	for id := range s.running {
		ids = append(ids, id)
	}
	return ids
}

// failStale fails other runners' unfinished tasks whose heartbeat is
// before before, and tells of each.
func (s *Service) failStale(ctx context.Context, before time.Time) {
	failed, err := s.opts.Store.FailStaleTasks(ctx, before, s.runner, restarted, s.opts.Now())
	if err != nil {
		s.warn(ctx, "tasks: fail the tasks of a gone process", err)
		return
	}
	for _, t := range failed {
		s.opts.Logger.Info("task failed: "+restarted, "task", t.ID, "agent", t.AgentID, "tool", t.Tool)
		s.ended(ctx, t, s.owner(ctx, t.AgentID))
	}
}

// owner returns the ID of the agent's owner; "" when unknown.
func (s *Service) owner(ctx context.Context, agentID string) string {
	if s.opts.Agents == nil {
		return ""
	}
	a, err := s.opts.Agents.FindAgent(ctx, agentID)
	if err != nil {
		return ""
	}
	return a.OwnerID
}

// warn logs the failure of a background write, unless it failed because
// ctx ended: the gateway is closing, and what the write missed is done
// again after its next start (Recover) or at the next heartbeat.
func (s *Service) warn(ctx context.Context, msg string, err error) {
	if ctx.Err() != nil {
		return
	}
	s.opts.Logger.Warn(msg, "err", err)
}
