package bus

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Handoff. An inbox stream offers itself here once it is past its resume
// pass (Idle); a message posted on this replica for its inbox is then stored
// already delivered to it, in the transaction that posts it
// (MessageStore.PostDelivered), and handed over in process. That saves
// one write transaction per message: the stream's claim, and the signal
// that would wake every stream of the agent to race for the message. A
// stream stays offered while it sends (it takes what was handed over
// meanwhile at its next Take), as it would claim all it can on a wake;
// posts spread over the offered streams of an agent in turn. Streams of
// other replicas, and streams not offered yet, still claim what
// the signal of a post announces; the store delivers a message at once
// only when no older one of the inbox is claimable, so that each stream
// sends its messages in seq order (a resuming worker's Last-Event-ID
// relies on it). On a store that can (HandingStore, SQLite's), the post
// returns before its transaction commits: the message reaches its worker
// sooner, and the worker's reply commits both in one transaction; should
// that commit fail, the call waiting for the reply ends with the error
// (Bus.lost).

// taker is one inbox stream's Handoff.
type taker struct {
	inbox mcpgate.Inbox
	b     *Bus
	ready chan struct{}

	mu      sync.Mutex
	settled sync.Cond // on mu: a reservation was settled
	offered bool
	closed  bool
	pending int // posts that reserved the stream and have not settled
	msgs    []*mcpgate.Message
	acked   []string // IDs acknowledged on this replica since Acked
}

var _ mcpgate.Handoff = (*taker)(nil)

// takers holds the inbox streams of this replica, by agent.
type takers struct {
	mu      sync.Mutex
	byAgent map[string][]*taker
}

// Handoff registers an inbox stream of this replica for the messages of
// inbox; Close withdraws it.
func (b *Bus) Handoff(inbox mcpgate.Inbox) mcpgate.Handoff {
	t := &taker{inbox: inbox, b: b, ready: make(chan struct{}, 1)}
	t.settled.L = &t.mu
	b.takers.mu.Lock()
	defer b.takers.mu.Unlock()
	if b.takers.byAgent == nil {
		b.takers.byAgent = map[string][]*taker{}
	}
	b.takers.byAgent[inbox.AgentID] = append(b.takers.byAgent[inbox.AgentID], t)
	return t
}

// reserve returns an offered stream that takes messages of the agent's
// skill, or nil when there is none. The stream reserved goes to the back
// of the agent's list, so that posts spread over its streams.
func (ts *takers) reserve(agentID, skill string) *taker {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	list := ts.byAgent[agentID]
	for i, t := range list {
		if (t.inbox.Skill == "" || t.inbox.Skill == skill) && t.reserve() {
			list = append(slices.Delete(list, i, i+1), t)
			ts.byAgent[agentID] = list
			return t
		}
	}
	return nil
}

// remove withdraws t.
func (ts *takers) remove(t *taker) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	list := slices.DeleteFunc(ts.byAgent[t.inbox.AgentID], func(o *taker) bool { return o == t })
	if len(list) == 0 {
		delete(ts.byAgent, t.inbox.AgentID)
	} else {
		ts.byAgent[t.inbox.AgentID] = list
	}
}

// ack tells the agent's streams of this replica that the message msgID
// was acknowledged.
func (ts *takers) ack(agentID, msgID string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.byAgent[agentID] {
		t.ack(msgID)
	}
}

// ack records that the message msgID was acknowledged.
func (t *taker) ack(msgID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.acked = append(t.acked, msgID)
	}
}

// Acked returns the IDs of the messages acknowledged on this replica since
// the last call.
func (t *taker) Acked() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.acked
	t.acked = nil
	return ids
}

// reserve takes t for one post, which must settle it, if t is offered;
// it reports whether it did.
func (t *taker) reserve() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.offered || t.closed {
		return false
	}
	t.pending++
	return true
}

// settle ends a reservation: the post hands m over when it was delivered
// to the stream. It reports whether the stream took m: false when it was
// not delivered, or the stream closed meanwhile.
func (t *taker) settle(m *mcpgate.Message, delivered bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending--
	t.settled.Broadcast()
	if !delivered || t.closed {
		return false
	}
	t.msgs = append(t.msgs, m)
	notify(t.ready)
	return true
}

// Idle offers the stream for the messages posted from now on.
func (t *taker) Idle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.offered = true
}

// Ready receives a signal when messages were handed over.
func (t *taker) Ready() <-chan struct{} { return t.ready }

// Take returns the messages handed over since the last Take, once every
// post that reserved the stream has settled: a message handed over is
// older than any the stream claimed before Take (its post reserved the
// stream before it took its seq), so the stream can send them in order.
func (t *taker) Take() []*mcpgate.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.pending > 0 {
		t.settled.Wait()
	}
	msgs := t.msgs
	t.msgs = nil
	return msgs
}

// Close withdraws the stream and returns the messages handed over but not
// taken.
func (t *taker) Close() []*mcpgate.Message {
	t.b.takers.remove(t)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	msgs := t.msgs
	t.msgs = nil
	return msgs
}

// postToAgent stores m, a message to the agent's workers, delivered at
// once to an offered stream of this replica when there is one and the store
// allows it; otherwise it wakes the agent's streams on every replica to
// claim it. fresh is as for post.
func (b *Bus) postToAgent(ctx context.Context, m *mcpgate.Message, fresh bool) error {
	var t *taker
	if !b.noHandoff {
		t = b.takers.reserve(m.AgentID, m.Skill)
	}
	if t == nil {
		return b.postAndWake(ctx, m)
	}
	delivered, took, err := b.postDeliveredTo(ctx, t, m, fresh)
	switch {
	case err != nil:
		return err
	case !delivered:
		b.signal(ctx, inboxTopic(m.AgentID))
	case !took:
		b.release(ctx, m)
	}
	return nil
}

// postDeliveredTo posts m delivered to the stream t reserved, when the store
// allows, and settles the reservation even if the store panics (a stream
// whose Take waits for it would wait forever). A fresh chat_message may be
// handed to the stream before the store ran its statements (handFirst).
func (b *Bus) postDeliveredTo(ctx context.Context, t *taker, m *mcpgate.Message, fresh bool) (delivered, took bool, err error) {
	settled := false
	defer func() {
		if !settled {
			t.settle(m, false)
		}
	}()
	switch {
	case fresh && b.first != nil && m.Type == mcpgate.MessageChat:
		if delivered, took, err = b.handFirst(ctx, t, m, &settled); settled {
			return delivered, took, err
		}
	case b.handing != nil:
		delivered, err = b.handing.PostHanded(ctx, m, t.inbox, func(err error) { b.lost(m, err) })
	default:
		delivered, err = b.store.PostDelivered(ctx, m, t.inbox)
	}
	delivered = delivered && err == nil
	took, settled = t.settle(m, delivered), true
	return delivered, took, err
}

// handFirst posts m through the FirstHandingStore, settling t with m when
// the store hands m over before its statements run, and then yielding, so
// that the stream sends m at once while m's statements wait; *settled
// says whether it did. A message handed over whose statements then
// failed is lost (Bus.lost): the worker has it, the store does not.
func (b *Bus) handFirst(ctx context.Context, t *taker, m *mcpgate.Message, settled *bool) (delivered, took bool, err error) {
	hand := func() {
		took, *settled = t.settle(m, true), true
		runtime.Gosched()
	}
	delivered, err = b.first.PostHandedFirst(ctx, m, t.inbox, hand, func(err error) { b.lost(m, err) })
	if *settled && err != nil {
		b.lost(m, err)
	}
	return delivered, took, err
}

// lost is told that m, handed over before it was stored (HandingStore),
// was not stored after all: the call waiting in Ask for its reply ends
// with err, since the reply the worker posts will be refused.
func (b *Bus) lost(m *mcpgate.Message, err error) {
	b.logger.Error("bus: a message handed to a worker was not stored", "message", m.ID, "err", err)
	if a := b.askers.find(m.ID); a != nil {
		b.endCall(a, fmt.Errorf("store the message for the agent: %w", err))
	}
}

// endCall ends the call a with err, and wakes it to return it.
func (b *Bus) endCall(a *asker, err error) {
	a.fail(err)
	a.notify()
}

// postAndWake stores m and wakes the agent's inbox streams.
func (b *Bus) postAndWake(ctx context.Context, m *mcpgate.Message) error {
	if err := b.store.PostMessage(ctx, m); err != nil {
		return err
	}
	b.signal(ctx, inboxTopic(m.AgentID))
	return nil
}

// release makes m, delivered to a stream that closed before taking it,
// claimable at once, and wakes the agent's streams to claim it. A failure
// leaves it to the visibility timeout.
func (b *Bus) release(ctx context.Context, m *mcpgate.Message) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := b.store.ReleaseMessages(ctx, m.AgentID, map[string]time.Time{m.ID: m.CreatedAt}); err != nil {
		b.logger.Warn("bus: release a message handed to a closed stream", "message", m.ID, "err", err)
		return
	}
	b.signal(ctx, inboxTopic(m.AgentID))
}
