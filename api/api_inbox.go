package api

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
)

// handleInbox streams the messages for the agent key's agent (of one skill
// with ?skill=) as server-sent events, until the worker disconnects. While
// it streams, the agent counts as online, and the messages it delivered
// stay its own: it renews them while they are unacknowledged, and when it
// ends it releases them, so another stream (another worker, or this one
// reconnected) gets them at once. Only a stream that can no longer renew
// (its replica died) leaves its messages to the visibility timeout. A
// worker that resumes with Last-Event-ID (or ?after=) also gets at once
// the unacknowledged messages after that seq delivered on a lost stream
// that was not released.
func (s *Server) handleInbox(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	skill := r.URL.Query().Get("skill")
	if skill != "" {
		if _, err := s.opts.Store.FindSkill(ctx, c.cred.AgentID, skill); err != nil {
			return withField(err, "skill")
		}
	}
	after, resume, err := resumeAfter(r)
	if err != nil {
		return err
	}
	st := &inboxStream{s: s, w: w, r: r, rc: http.NewResponseController(w), agentID: c.cred.AgentID, skill: skill, held: map[string]time.Time{}}
	release := s.opts.Bus.MarkOnline(ctx, st.agentID, skill)
	defer release()
	defer st.release(ctx)
	wake := s.opts.Bus.Inbox(ctx, st.agentID)
	handoff := s.opts.Bus.Handoff(mcpgate.Inbox{AgentID: st.agentID, Skill: skill, Visibility: s.visibility()})
	defer st.close(handoff) // before st.release, which releases what it holds
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := st.flush(); err != nil {
		return nil // the worker is gone; nothing to answer
	}
	if resume {
		if err := st.resume(ctx, after); err != nil {
			return st.end(err)
		}
	}
	return st.end(st.run(ctx, wake, handoff))
}

// resumeAfter reads the seq a worker resumes after, from Last-Event-ID or
// ?after=. Returns EINVALID when it is not a non-negative integer.
func resumeAfter(r *http.Request) (after int64, resume bool, err error) {
	raw, field := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if raw == "" {
		raw, field = r.URL.Query().Get("after"), "after"
	}
	if raw == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, false, fieldErrorf(mcpgate.EINVALID, field, "%s must be the seq of the last message received, not %q", field, raw)
	}
	return n, true, nil
}

// inboxStream is one worker's open inbox.
type inboxStream struct {
	s       *Server
	w       http.ResponseWriter
	r       *http.Request // the worker's, authenticated again while it streams
	rc      *http.ResponseController
	agentID string
	skill   string
	// held maps the unacknowledged messages this stream delivered to the
	// delivery time it last wrote for them.
	held map[string]time.Time
}

// run delivers claimable messages whenever the bus signals a post, the
// visibility timeout may have freed messages for redelivery, and pings
// while quiet, until ctx ends, a write fails, or the worker's key no longer
// authenticates for the agent. It is offered through handoff for the
// messages posted on this replica, which it sends without a claim. Four times per visibility it checks the key and renews the
// messages it holds.
func (st *inboxStream) run(ctx context.Context, wake <-chan struct{}, handoff mcpgate.Handoff) error {
	recheck := time.NewTicker(max(st.s.visibility()/4, 10*time.Millisecond))
	defer recheck.Stop()
	ping := time.NewTicker(st.s.inboxPing())
	defer ping.Stop()
	handoff.Idle() // past the resume pass: messages may be handed over
	claim := true
	for {
		if claim {
			if err := st.deliver(ctx, handoff); err != nil {
				return err
			}
		}
		claim = true
		select {
		case <-ctx.Done():
			return nil
		case <-handoff.Ready():
			if err := st.send(st.take(handoff, nil), 0); err != nil {
				return err
			}
			claim = false
		case _, ok := <-wake:
			if !ok {
				wake = nil // the bus is done with this stream; rechecks go on
			}
		case <-recheck.C:
			if err := st.authorized(ctx); err != nil {
				return err
			}
			if err := st.renew(ctx, handoff); err != nil {
				return err
			}
		case <-ping.C:
			if err := st.write([]byte(": ping\n\n")); err != nil {
				return err
			}
		}
	}
}

// authorized returns an error once the stream's key no longer opens the
// agent's inbox: it was revoked, or the agent was deleted or given to
// another owner.
func (st *inboxStream) authorized(ctx context.Context) error {
	c, err := st.s.authenticate(st.r)
	if err != nil {
		return err
	}
	if c.cred.Kind != mcpgate.CredentialAgentKey || c.cred.AgentID != st.agentID {
		return mcpgate.Errorf(mcpgate.EFORBIDDEN, "the key no longer opens the inbox of agent %q", st.agentID)
	}
	_, err = st.s.readAgent(ctx, c, st.agentID)
	return err
}

// deliver sends every message the store lets this stream claim now, with
// those handed over meanwhile, in seq order.
func (st *inboxStream) deliver(ctx context.Context, handoff mcpgate.Handoff) error {
	for {
		now := time.Now()
		msgs, err := st.s.opts.Store.ClaimMessages(ctx, st.agentID, st.skill, now, st.s.visibility(), inboxBatch)
		if err != nil {
			return err
		}
		st.hold(msgs, now)
		full := len(msgs) == inboxBatch
		if err := st.send(st.take(handoff, msgs), 0); err != nil {
			return err
		}
		if !full {
			return nil
		}
	}
}

// resume sends the unacknowledged messages after seq at once, whenever
// they were delivered: the worker lost them with its previous stream.
// Claiming them restarts their visibility timeout. Every claim of the pass
// is made at the same time with a visibility of one microsecond (the
// store's resolution), so that a message claimed by the pass is not
// claimable again within it: the pass ends after one round through the
// unacknowledged messages, however many there are.
func (st *inboxStream) resume(ctx context.Context, after int64) error {
	at := time.Now()
	for {
		msgs, err := st.s.opts.Store.ClaimMessages(ctx, st.agentID, st.skill, at, time.Microsecond, inboxBatch)
		if err != nil {
			return err
		}
		st.hold(msgs, at)
		if err := st.send(msgs, after); err != nil {
			return err
		}
		if len(msgs) < inboxBatch {
			return nil
		}
	}
}

// take holds the messages handed over by the bus, each delivered to this
// stream at its CreatedAt, and returns them with claimed, in seq order.
func (st *inboxStream) take(handoff mcpgate.Handoff, claimed []*mcpgate.Message) []*mcpgate.Message {
	handed := handoff.Take()
	if len(handed) == 0 {
		return claimed
	}
	for _, m := range handed {
		st.held[m.ID] = m.CreatedAt
	}
	msgs := append(claimed, handed...)
	slices.SortFunc(msgs, func(a, b *mcpgate.Message) int { return cmp.Compare(a.Seq, b.Seq) })
	return msgs
}

// close withdraws the stream from handoff and holds what was handed over
// but not taken, for release to give back.
func (st *inboxStream) close(handoff mcpgate.Handoff) {
	for _, m := range handoff.Close() {
		st.held[m.ID] = m.CreatedAt
	}
}

// hold records msgs as delivered by this stream at at.
func (st *inboxStream) hold(msgs []*mcpgate.Message, at time.Time) {
	for _, m := range msgs {
		st.held[m.ID] = at
	}
}

// renew restarts the visibility of the messages this stream holds that
// are due (see due), and forgets those acknowledged since or delivered
// again elsewhere. Those acknowledged on this replica (most of them: a
// reply posted here acks its message) are dropped before the store is
// asked, which then renews only the few still unanswered, or is not asked
// at all.
func (st *inboxStream) renew(ctx context.Context, handoff mcpgate.Handoff) error {
	for _, id := range handoff.Acked() {
		delete(st.held, id)
	}
	now := time.Now()
	due := due(st.held, now, st.s.visibility())
	if len(due) == 0 {
		return nil
	}
	ids, err := st.s.opts.Store.RenewMessages(ctx, st.agentID, due, now)
	if err != nil {
		return err
	}
	for id := range due {
		delete(st.held, id)
	}
	for _, id := range ids {
		st.held[id] = now
	}
	return nil
}

// due returns the messages of held delivered (or last renewed) a quarter
// of the visibility ago or more. A younger one waits for the next
// renewal, a quarter visibility later, when it is at most half the
// visibility old: still in time, and a message answered within a quarter
// visibility (most are) is never renewed at all.
func due(held map[string]time.Time, now time.Time, visibility time.Duration) map[string]time.Time {
	d := map[string]time.Time{}
	for id, at := range held {
		if now.Sub(at) >= visibility/4 {
			d[id] = at
		}
	}
	return d
}

// release gives back the messages this stream holds unanswered, so that
// another stream gets them at once: the worker that took them is gone. The
// hook of a worker whose stream ended but which still works on a message
// is its reply: the first final reply is kept, a second is refused.
func (st *inboxStream) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), inboxWriteTimeout)
	defer cancel()
	if err := st.s.opts.Store.ReleaseMessages(ctx, st.agentID, st.held); err != nil {
		st.s.opts.Logger.Warn("agent inbox: release held messages", "agent", st.agentID, "err", err)
		return
	}
	if len(st.held) > 0 {
		st.s.opts.Bus.WakeInbox(ctx, st.agentID)
	}
}

// send writes the messages with a seq above after as events and flushes
// them.
func (st *inboxStream) send(msgs []*mcpgate.Message, after int64) error {
	sent := false
	for _, m := range msgs {
		if m.Seq <= after {
			continue
		}
		ev, err := encodeEvent(m)
		if err != nil {
			return err
		}
		if err := st.writeOnly(ev); err != nil {
			return err
		}
		sent = true
	}
	if !sent {
		return nil
	}
	return st.flush()
}

// write writes b and flushes it.
func (st *inboxStream) write(b []byte) error {
	if err := st.writeOnly(b); err != nil {
		return err
	}
	return st.flush()
}

// writeOnly writes b within the write timeout.
func (st *inboxStream) writeOnly(b []byte) error {
	st.extend()
	_, err := st.w.Write(b)
	return err
}

// flush sends what was written to the worker within the write timeout.
func (st *inboxStream) flush() error {
	st.extend()
	return st.rc.Flush()
}

// extend sets the write deadline one write timeout from now. A writer
// without deadlines is written to without one.
func (st *inboxStream) extend() {
	_ = st.rc.SetWriteDeadline(time.Now().Add(inboxWriteTimeout))
}

// end ends a stream whose headers are sent: errors can no longer reach the
// worker, so a store failure is logged; a gone worker is no failure.
func (st *inboxStream) end(err error) error {
	st.extend() // room for net/http to end the response
	if err != nil && !errors.Is(err, context.Canceled) {
		st.s.opts.Logger.Warn("agent inbox stream ended", "agent", st.agentID, "err", err)
	}
	return nil
}
