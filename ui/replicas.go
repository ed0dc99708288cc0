package ui

import (
	"context"
	"sync"

	"github.com/mcpgate/mcpgate"
)

// The approvals queue across replicas. A replica hears only its own
// approval events (ApprovalEvents), so after each it signals
// ApprovalsTopic on the bus (Signals); every replica, woken so, lists the
// pending approvals and publishes to its own open queues the ones it had
// not seen asked for, and the decision of the ones gone from the list.
// The pages' own poll stays as a fallback.

// ApprovalsTopic is the bus topic that tells every replica that an
// approval was asked for or decided somewhere.
const ApprovalsTopic = "ui:approvals"

// Signals wakes the replicas (bus.Bus).
type Signals interface {
	// Watch returns a channel signalled whenever Signal is called for
	// topic on any replica, and whenever signals may have been lost.
	Watch(ctx context.Context, topic string) <-chan struct{}
	// Signal wakes topic's watchers on every replica.
	Signal(ctx context.Context, topic string)
}

// pendingSet is the pending approvals a replica's queues have been told
// of, by ID.
type pendingSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

// local publishes an approval event of this replica to its open queues,
// notes it, and tells the other replicas.
func (h *Handler) local(a *mcpgate.Approval) {
	h.pending.mark(a)
	h.live.publish(a)
	if h.opts.Signals != nil {
		go h.opts.Signals.Signal(context.WithoutCancel(h.ctx), ApprovalsTopic)
	}
}

// mark notes a as pending or no longer pending.
func (ps *pendingSet) mark(a *mcpgate.Approval) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if a.State == mcpgate.ApprovalPending {
		ps.ids[a.ID] = true
	} else {
		delete(ps.ids, a.ID)
	}
}

// followReplicas publishes the other replicas' approval events each time
// wake fires, until it closes or Close is called.
func (h *Handler) followReplicas(wake <-chan struct{}) {
	h.catchUp(false)
	for {
		select {
		case <-h.ctx.Done():
			return
		case _, ok := <-wake:
			if !ok {
				return
			}
			h.catchUp(true)
		}
	}
}

// catchUp lists the pending approvals and, when publish, tells the open
// queues of those not seen yet and of the decisions of those gone.
func (h *Handler) catchUp(publish bool) {
	ctx := h.ctx
	list, err := h.opts.Store.ListApprovals(ctx, mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending, Limit: 1000})
	if err != nil {
		if ctx.Err() == nil {
			h.opts.Logger.Warn("ui: list pending approvals", "err", err)
		}
		return
	}
	now := make(map[string]bool, len(list))
	h.pending.mu.Lock()
	var asked []*mcpgate.Approval
	for _, a := range list {
		now[a.ID] = true
		if !h.pending.ids[a.ID] {
			asked = append(asked, a)
		}
	}
	var gone []string
	for id := range h.pending.ids {
		if !now[id] {
			gone = append(gone, id)
		}
	}
	h.pending.ids = now
	h.pending.mu.Unlock()
	if publish {
		h.publishChanges(ctx, asked, gone)
	}
}

// publishChanges publishes approvals asked for and the decisions of those
// gone from the pending list.
func (h *Handler) publishChanges(ctx context.Context, asked []*mcpgate.Approval, gone []string) {
	for _, a := range asked {
		h.live.publish(a)
	}
	for _, id := range gone {
		if a, err := h.opts.Store.FindApproval(ctx, id); err == nil {
			h.live.publish(a)
		}
	}
}
