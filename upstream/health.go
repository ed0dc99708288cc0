package upstream

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// callWriteEvery is how often at most a successful call's time is written.
const callWriteEvery = time.Minute

// healthWriteTimeout bounds one write of a skill's health.
const healthWriteTimeout = 5 * time.Second

// healthWriter keeps a skill's health and writes it on every change of
// state, and at most once a minute for the time of the last call.
type healthWriter struct {
	m *Manager
	// writing serializes writes, so that they land in order; it is held
	// across the store's round trip, mu never is, so that a call's record
	// (called, on the call's path) never waits for a write.
	writing   sync.Mutex
	mu        sync.Mutex // guards h, lastCall and lastWrite
	h         mcpgate.SkillHealth
	lastCall  time.Time // of the last successful call, put in h when written
	lastWrite time.Time // of a call's time
}

// init sets the skill the health is about.
func (w *healthWriter) init(m *Manager, sk *mcpgate.Skill) {
	w.m = m
	w.h = mcpgate.SkillHealth{AgentID: sk.AgentID, Skill: sk.Name}
}

// state records a new state, writing it when it changed.
func (w *healthWriter) state(state string) {
	w.update(context.Background(), func(h *mcpgate.SkillHealth) bool {
		changed := h.State != state
		h.State = state
		return changed
	})
}

// connected records a connection and the protocol revision negotiated on
// it, writing them when either changed.
func (w *healthWriter) connected(version string) {
	w.update(context.Background(), func(h *mcpgate.SkillHealth) bool {
		changed := h.State != mcpgate.HealthConnected || h.ProtocolVersion != version
		h.State, h.ProtocolVersion = mcpgate.HealthConnected, version
		return changed
	})
}

// failed records an error.
func (w *healthWriter) failed(err error) {
	now := time.Now()
	msg := mcpgate.ErrorMessage(err)
	if mcpgate.ErrorCode(err) == mcpgate.EINTERNAL {
		msg = shortError(err)
	}
	w.update(context.Background(), func(h *mcpgate.SkillHealth) bool {
		changed := h.State != mcpgate.HealthError || h.LastError != msg
		h.State, h.LastError, h.LastErrorAt = mcpgate.HealthError, msg, &now
		return changed
	})
}

// tools records how many tools the last discovery found.
func (w *healthWriter) tools(n int) {
	w.update(context.Background(), func(h *mcpgate.SkillHealth) bool {
		changed := h.Tools != n || h.State != mcpgate.HealthConnected
		h.Tools, h.State = n, mcpgate.HealthConnected
		return changed
	})
}

// stopped records that the gateway closed the connection.
func (w *healthWriter) stopped(ctx context.Context) {
	w.update(ctx, func(h *mcpgate.SkillHealth) bool {
		h.State = mcpgate.HealthStopped
		return true
	})
}

// called records a successful call, writing it at most once a minute, off
// the caller's path.
func (w *healthWriter) called() {
	now := time.Now()
	w.mu.Lock()
	w.lastCall = now
	due := now.Sub(w.lastWrite) >= callWriteEvery
	if due {
		w.lastWrite = now
	}
	w.mu.Unlock()
	if due {
		w.m.goWrite(func() { w.update(context.Background(), func(*mcpgate.SkillHealth) bool { return true }) })
	}
}

// update applies change and writes the health when it reports a change.
func (w *healthWriter) update(ctx context.Context, change func(h *mcpgate.SkillHealth) bool) {
	w.writing.Lock()
	defer w.writing.Unlock()
	w.mu.Lock()
	if !w.lastCall.IsZero() && (w.h.LastCallAt == nil || !w.h.LastCallAt.Equal(w.lastCall)) {
		last := w.lastCall // a copy only when written, not on every call
		w.h.LastCallAt = &last
	}
	changed := change(&w.h)
	h := w.h
	w.mu.Unlock()
	if !changed || w.m.health == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healthWriteTimeout)
	defer cancel()
	if err := w.m.health.PutSkillHealth(ctx, &h); err != nil {
		w.m.log.Debug("upstream health not written", "agent", h.AgentID, "skill", h.Skill, "err", err)
	}
}

// goWrite runs write on a goroutine of its own, which Close waits for; it
// runs nothing once Close has begun.
func (m *Manager) goWrite(write func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.writes.Go(write) // under mu, so that no write starts once Close waits
	}
}
