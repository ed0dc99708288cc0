package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// ApprovalStore keeps approvals; see mcpgate.ApprovalStore.
type ApprovalStore interface {
	CreateApproval(ctx context.Context, a *mcpgate.Approval) error
	FindApproval(ctx context.Context, id string) (*mcpgate.Approval, error)
	FindApprovalByKey(ctx context.Context, identity, agentID, key string) (*mcpgate.Approval, error)
	DecideApproval(ctx context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error)
}

// Signals wakes waiters across replicas (the bus): a decision signals
// ApprovalTopic of its approval.
type Signals interface {
	Watch(ctx context.Context, topic string) <-chan struct{}
	Signal(ctx context.Context, topic string)
}

// ApprovalEvents hears of approvals asked and decided (webhooks, the
// dashboard's live list).
type ApprovalEvents interface {
	ApprovalRequested(a *mcpgate.Approval)
	ApprovalDecided(a *mcpgate.Approval)
}

// ApprovalTopic is the bus topic signalled when approval id is decided.
func ApprovalTopic(id string) string { return "approval:" + id }

// DefaultApprovalPoll is how often a waiting call reads its approval when
// no signal came: decisions made by a process without the bus (the CLI on
// a SQLite data dir) are seen within it.
const DefaultApprovalPoll = time.Second

// storedPoll is how often a retry attached to an approved call reads the
// key's row until the first try stores its result, which follows the
// approval by one backend call.
const storedPoll = 200 * time.Millisecond

// approvalProgressEvery is how often a waiting caller hears how long is
// left.
const approvalProgressEvery = 10 * time.Second

// approvalGate holds a call whose tool needs approval until a reviewer
// decides, or, for a skill with approval: caller whose client can be
// asked, until the calling user confirms it. It returns nil when the call
// may run, with call.Arguments set to the approved ones (and attachments
// signed anew), or the result that answers it: rejected, declined,
// expired, or refused when the gateway keeps no approvals.
func (p *Pipeline) approvalGate(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState) (*mcpgate.Result, error) {
	if !e.Skill.NeedsApproval(e.Tool) {
		return nil, nil
	}
	if e.Skill.AsksCaller() {
		if res, asked, err := p.askCaller(ctx, e, call, st); asked || err != nil {
			return res, err
		}
	}
	if p.opts.Approvals == nil {
		return mcpgate.ErrorResult("Tool %s needs human approval (its skill %q sets auto_approve: false), and this gateway has no approval gate; the call was not made.", e.Name, e.Skill.Name), nil
	}
	a, err := p.askApproval(ctx, e, call, st)
	if err != nil {
		return nil, err
	}
	a, err = p.awaitDecision(ctx, e, call, a)
	if err != nil {
		p.withdraw(ctx, a, st)
		return nil, err
	}
	if res, err := p.decided(e, call, st, a); res != nil || err != nil {
		return res, err
	}
	return nil, p.resign(ctx, call)
}

// resign signs the attachments of an approved call anew, after its
// arguments were set to the approved ones: the URLs signed before the wait
// may have expired, and the files are checked again.
func (p *Pipeline) resign(ctx context.Context, call *mcpgate.Call) error {
	if len(call.Attachments) == 0 {
		return nil
	}
	call.Attachments = nil
	return p.attachments(ctx, call)
}

// askApproval returns the approval the call waits on: for a retry with
// the same idempotency key and arguments, the one its first try asked for
// while it is pending or approved; otherwise a new one.
func (p *Pipeline) askApproval(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState) (*mcpgate.Approval, error) {
	canon, err := mcpgate.CanonicalJSON(callerArguments(st))
	if err != nil {
		return nil, err
	}
	hash := mcpgate.HashCanonical(e.Name, canon)
	if a := p.attachable(ctx, call, st.key, hash); a != nil {
		return a, nil
	}
	now := p.opts.Now()
	c := call.Caller
	a := &mcpgate.Approval{
		AgentID: call.Agent.ID, Skill: e.Skill.Name, Tool: e.Name, Arguments: canon, ArgsHash: hash,
		Identity: c.Identity, UserID: c.UserID, CredentialKind: c.Kind, CredentialID: c.CredentialID,
		SessionID: call.SessionID, IdempotencyKey: st.key, RequestedAt: now, Deadline: now.Add(e.Skill.ApprovalWait()),
	}
	if err := p.opts.Approvals.CreateApproval(ctx, a); err != nil {
		return nil, fmt.Errorf("create approval: %w", err)
	}
	if p.opts.ApprovalEvents != nil {
		p.opts.ApprovalEvents.ApprovalRequested(a)
	}
	return a, nil
}

// callerArguments are the arguments the approval binds: the caller's,
// hashed as the idempotency stage hashes them, absent ones as {}.
func callerArguments(st *callState) []byte {
	if len(st.args) == 0 || string(st.args) == "null" {
		return []byte("{}")
	}
	return st.args
}

// attachable returns the pending or approved approval an earlier try of
// the call with the same idempotency key asked for, or nil.
func (p *Pipeline) attachable(ctx context.Context, call *mcpgate.Call, key, hash string) *mcpgate.Approval {
	if key == "" {
		return nil
	}
	a, err := p.opts.Approvals.FindApprovalByKey(ctx, callerIdentity(call), call.Agent.ID, key)
	if err != nil || a.ArgsHash != hash {
		return nil
	}
	if a.State == mcpgate.ApprovalPending || a.State == mcpgate.ApprovalApproved {
		return a
	}
	return nil
}

// awaitDecision waits until a is decided or its deadline passes (then it
// expires it), woken by the bus with a slow poll as a fallback, telling
// the caller how long is left.
func (p *Pipeline) awaitDecision(ctx context.Context, e *registry.Entry, call *mcpgate.Call, a *mcpgate.Approval) (*mcpgate.Approval, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wake <-chan struct{}
	if p.opts.Signals != nil {
		wake = p.opts.Signals.Watch(ctx, ApprovalTopic(a.ID))
	}
	poll := time.NewTicker(p.approvalPoll())
	defer poll.Stop()
	deadline := time.NewTimer(a.Deadline.Sub(p.opts.Now()))
	defer deadline.Stop()
	// Both notices go out before the first read: a decision made at once
	// must not leave the caller without them.
	lastReport, msg := p.opts.Now(), p.waitingMessage(e, a)
	call.Notifier.Log("info", "mcpgate", msg)
	call.Notifier.Progress(waitedFraction(a, lastReport), 0, msg)
	for {
		cur, err := p.opts.Approvals.FindApproval(ctx, a.ID)
		if err != nil {
			return a, err
		}
		if cur.State != mcpgate.ApprovalPending {
			return cur, nil
		}
		if now := p.opts.Now(); now.Sub(lastReport) >= approvalProgressEvery {
			lastReport = now
			call.Notifier.Progress(waitedFraction(a, now), 0, p.waitingMessage(e, a))
		}
		select {
		case <-ctx.Done():
			return a, mcpgate.Errorf(mcpgate.ECANCELED, "the call of tool %s was canceled while it waited for approval", e.Name)
		case <-wake:
		case <-poll.C:
		case <-deadline.C:
			return p.expire(ctx, a)
		}
	}
}

// waitedFraction is the progress a waiting call reports: the share of its
// wait that has passed, from 0 up to 1 at the deadline. It grows with each
// report, as progress must, and stays below the 1 of "done" that the
// pipeline reports after the backend answers.
func waitedFraction(a *mcpgate.Approval, now time.Time) float64 {
	wait := a.Deadline.Sub(a.RequestedAt)
	if wait <= 0 {
		return 0
	}
	f := float64(now.Sub(a.RequestedAt)) / float64(wait)
	return min(max(f, 0), 0.999)
}

// expire marks a expired, or returns the decision that came first.
func (p *Pipeline) expire(ctx context.Context, a *mcpgate.Approval) (*mcpgate.Approval, error) {
	d, err := p.opts.Approvals.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalExpired, At: p.opts.Now()})
	if mcpgate.ErrorCode(err) == mcpgate.ECONFLICT && d != nil {
		return d, nil
	}
	if err != nil {
		return a, err
	}
	p.decidedEvent(ctx, d)
	return d, nil
}

// withdraw withdraws the approval of a call canceled while it waited. A
// call with an idempotency key leaves it pending instead: a caller that
// lost its connection retries with the key and attaches to it.
func (p *Pipeline) withdraw(ctx context.Context, a *mcpgate.Approval, st *callState) {
	if st.key != "" || a == nil || a.State != mcpgate.ApprovalPending {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	d, err := p.opts.Approvals.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalWithdrawn, At: p.opts.Now()})
	if err != nil {
		if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
			p.opts.Logger.Warn("approval not withdrawn", "approval", a.ID, "err", err)
		}
		return
	}
	p.decidedEvent(ctx, d)
}

// decidedEvent wakes the other waiters of a decision the pipeline made and
// reports it.
func (p *Pipeline) decidedEvent(ctx context.Context, a *mcpgate.Approval) {
	if p.opts.Signals != nil {
		p.opts.Signals.Signal(ctx, ApprovalTopic(a.ID))
	}
	if p.opts.ApprovalEvents != nil {
		p.opts.ApprovalEvents.ApprovalDecided(a)
	}
}

// decided answers a call by its approval's decision: nil to run it with
// the approved arguments, a rejected result otherwise.
func (p *Pipeline) decided(e *registry.Entry, call *mcpgate.Call, st *callState, a *mcpgate.Approval) (*mcpgate.Result, error) {
	switch a.State {
	case mcpgate.ApprovalApproved:
		call.Arguments, call.Decoded = a.Arguments, nil
		return nil, nil
	case mcpgate.ApprovalExpired:
		st.rejected = true
		return mcpgate.ErrorResult("rejected: no decision within %s", e.Skill.ApprovalWait()), nil
	case mcpgate.ApprovalRejected:
		st.rejected = true
		return RejectedResult(e.Name, a), nil
	}
	return nil, mcpgate.Errorf(mcpgate.ECANCELED, "the approval of this call of tool %s was %s", e.Name, a.State)
}

// RejectedResult is the result of a call a reviewer rejected.
func RejectedResult(tool string, a *mcpgate.Approval) *mcpgate.Result {
	reviewer := a.Reviewer
	if reviewer == "" {
		reviewer = "a reviewer"
	}
	if a.Reason == "" {
		return mcpgate.ErrorResult("Call to %s was rejected by %s.", tool, reviewer)
	}
	return mcpgate.ErrorResult("Call to %s was rejected by %s: %s", tool, reviewer, a.Reason)
}

// waitingMessage says whom the call waits for and how long is left.
func (p *Pipeline) waitingMessage(e *registry.Entry, a *mcpgate.Approval) string {
	who := "the agent's owner"
	if len(e.Skill.Approvers) > 0 {
		who = strings.Join(e.Skill.Approvers, ", ")
	}
	left := max(a.Deadline.Sub(p.opts.Now()), 0).Round(time.Second)
	return fmt.Sprintf("waiting for approval by %s, %s left", who, left)
}

// approvalPoll is how often a waiting call reads its approval.
func (p *Pipeline) approvalPoll() time.Duration {
	if p.opts.ApprovalPoll > 0 {
		return p.opts.ApprovalPoll
	}
	return DefaultApprovalPoll
}

// idempotencyFinder reads an idempotency key's row; the sqlstore has it.
type idempotencyFinder interface {
	FindIdempotency(ctx context.Context, identity, agentID, key string) (*mcpgate.IdempotencyClaim, error)
}

// attachRetry answers a retry whose idempotency key is held by an earlier
// try of the same call still waiting for its approval, instead of
// ECONFLICT: the retry waits on the same approval; a rejection or expiry
// answers it as it answers the first try, and after an approve it waits
// for the first try's stored result and replays it. ok is false when the
// held key is no such wait.
func (p *Pipeline) attachRetry(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState, c, held *mcpgate.IdempotencyClaim) (res *mcpgate.Result, ok bool, err error) {
	if held.Done() || held.Hash != c.Hash || p.opts.Approvals == nil || !e.Skill.NeedsApproval(e.Tool) {
		return nil, false, nil
	}
	a := p.attachable(ctx, call, c.Key, c.Hash)
	if a == nil {
		return nil, false, nil
	}
	if a, err = p.awaitDecision(ctx, e, call, a); err != nil {
		return nil, true, err
	}
	if a.State != mcpgate.ApprovalApproved {
		res, err = p.decided(e, call, st, a)
		return res, true, err
	}
	res, err = p.awaitStored(ctx, e, c, st)
	return res, true, err
}

// awaitStored waits for the result the holder of c's key stores and
// replays it.
func (p *Pipeline) awaitStored(ctx context.Context, e *registry.Entry, c *mcpgate.IdempotencyClaim, st *callState) (*mcpgate.Result, error) {
	f, ok := p.opts.Idempotency.(idempotencyFinder)
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ECONFLICT, "a call with idempotency key %q is still in flight; wait for its result", c.Key)
	}
	ctx, cancel := context.WithTimeout(ctx, toolTimeout(e)+deadlineGrace+p.claimGrace())
	defer cancel()
	for {
		row, err := f.FindIdempotency(ctx, c.Identity, c.AgentID, c.Key)
		switch {
		case err != nil && mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND:
			return nil, mcpgate.Errorf(mcpgate.ECONFLICT, "the approved call with idempotency key %q failed before it stored a result; retry it", c.Key)
		case err != nil:
			return nil, err
		case row.Done():
			return replay(row, c, st)
		}
		if !mcpgate.Sleep(ctx, storedPoll) {
			return nil, mcpgate.Errorf(mcpgate.ECONFLICT, "a call with idempotency key %q is still in flight; wait for its result", c.Key)
		}
	}
}
