// Package bus carries "something happened" signals between the goroutines
// of the gateway's replicas: a tool call waiting for an agent's reply, and
// agent inbox streams waiting for messages to deliver.
//
// Waiting never polls the database. A waiter subscribes to a topic in
// process; Post stores a message and then signals the message's topic here
// and, through a Broker such as PostgreSQL's LISTEN/NOTIFY, on every other
// replica. Signals carry no data: a woken waiter reads what is new from the
// store, so a duplicated signal costs one read and a lost one is made good
// when the Broker reconnects and wakes every waiter.
//
// The package must not import any mcpgate package other than the root one.
package bus

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Store is what the bus keeps in the database: messages and presence.
type Store interface {
	mcpgate.MessageStore
	mcpgate.PresenceStore
}

// HandingStore is implemented by a Store that can store a message handed
// over in process without the caller waiting for its commit (see
// MessageStore.PostDelivered): PostHanded stores m as PostDelivered does,
// but may return before m is committed; if that commit then fails, m is
// not stored, and lost is called with the error. The bus hands messages
// to its inbox streams that way when its Store has the method.
// PostReplyHanded stores m, a final reply, as PostMessage does, but calls
// hand once m ran in its transaction, possibly before that commits, and
// returns once it committed, with the commit's error if it failed (hand
// was called all the same); the bus hands a reply to the call of this
// replica waiting for it that way, so that the call answers while the
// reply commits.
type HandingStore interface {
	PostHanded(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, lost func(error)) (bool, error)
	PostReplyHanded(ctx context.Context, m *mcpgate.Message, hand func()) error
}

// ClaimingStore is implemented by a HandingStore that can take a final
// reply the bus vouches for and handed over already: PostClaimedReply
// stores m, a final reply that answers, on its channel and from its
// agent, a chat_message the bus posted and saw stored, with m.Skill that
// channel's skill, for the call that has it; the store may then skip its
// own check of them, and return before m is committed (as PostHanded
// does): if that commit then fails, m is not stored, and lost is called
// with the error. The bus posts a reply it claimed for the call waiting
// for it (answer.go) that way.
type ClaimingStore interface {
	PostClaimedReply(ctx context.Context, m *mcpgate.Message, lost func(error)) error
}

// FirstHandingStore is implemented by a HandingStore that can hand a new
// chat_message over before storing it: PostHandedFirst posts m as
// PostHanded does but, when the store knows without reading that m may
// be delivered to the inbox to, calls hand once m has its seq and before
// m's statements run, and then returns true with their error, if any (a
// commit that fails afterwards is told to lost, as PostHanded's is). m's
// ID must be new. The bus posts the chat_message of Ask, whose ID it
// made, that way.
type FirstHandingStore interface {
	PostHandedFirst(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, hand func(), lost func(error)) (bool, error)
}

// Broker carries published payloads between processes.
type Broker interface {
	// Publish sends payload to every Subscribe of topic, in this process
	// and in others.
	Publish(ctx context.Context, topic string, payload []byte) error
	// Subscribe calls fn with every topic and payload published, one call
	// at a time, until ctx ends; then it returns ctx.Err(). It calls fn
	// with topic "" whenever it has (re)connected, since payloads published
	// while it was not connected are lost.
	Subscribe(ctx context.Context, fn func(topic string, payload []byte)) error
}

// Defaults of Options.
const (
	// A replica that dies is known to be gone within DefaultPresenceTTL of
	// its last refresh; a waiter that rechecks presence every heartbeat,
	// and once more half a heartbeat after a no, learns it within
	// DefaultPresenceTTL + 1.5 DefaultHeartbeat (9 s).
	DefaultHeartbeat   = 2 * time.Second
	DefaultPresenceTTL = 6 * time.Second
	// publishTimeout bounds how long Post waits for the Broker.
	publishTimeout = 5 * time.Second
	// resubscribeDelay is how long the bus waits before calling Subscribe
	// again when it failed.
	resubscribeDelay = time.Second
)

// Options configure a Bus.
type Options struct {
	// Store keeps the messages and presence records. It is required.
	Store Store
	// Broker carries signals to other replicas; nil means this process is
	// the only one.
	Broker Broker
	// Logger receives failures to publish, subscribe and record presence;
	// nil means slog.Default().
	Logger *slog.Logger
	// NoHandoff turns the handoff off (see handoff.go): every message to
	// agent workers is stored undelivered, signalled and claimed. It is
	// for an engine where a claim costs less than a delivered post: on
	// PostgreSQL an undelivered post is one statement and a claim another,
	// neither holding the agent's seq lock across a round trip, where a
	// delivered post is a transaction holding it for two.
	NoHandoff bool
	// Heartbeat is how often presence records are refreshed, and
	// PresenceTTL how long each stays valid: DefaultHeartbeat and
	// DefaultPresenceTTL when zero.
	Heartbeat, PresenceTTL time.Duration
}

// Bus carries "something happened" signals between the replicas'
// goroutines. Its methods are safe for concurrent use.
type Bus struct {
	store   Store
	handing HandingStore      // store, when it is one; nil otherwise
	claimed ClaimingStore     // store, when it is one and a HandingStore; nil otherwise
	first   FirstHandingStore // store, when it is one and a HandingStore; nil otherwise
	broker  Broker
	logger  *slog.Logger
	id      string // this replica, in presence records and broker payloads
	hub     hub
	online  presence
	takers  takers
	askers  askers

	heartbeat, ttl time.Duration
	noHandoff      bool
	stop           context.CancelFunc
	wg             sync.WaitGroup
}

// New returns a Bus over opts.Store and starts its background work:
// listening to the Broker and refreshing presence records. Close stops it.
func New(opts *Options) *Bus {
	b := &Bus{
		store: opts.Store, broker: opts.Broker, logger: opts.Logger, id: mcpgate.NewID("rep_"),
		heartbeat: opts.Heartbeat, ttl: opts.PresenceTTL, noHandoff: opts.NoHandoff,
	}
	b.handing, _ = opts.Store.(HandingStore)
	if b.handing != nil {
		b.claimed, _ = opts.Store.(ClaimingStore)
		b.first, _ = opts.Store.(FirstHandingStore)
	}
	if b.logger == nil {
		b.logger = slog.Default()
	}
	if b.heartbeat <= 0 {
		b.heartbeat = DefaultHeartbeat
	}
	if b.ttl <= 0 {
		b.ttl = DefaultPresenceTTL
	}
	b.hub.init()
	b.online.init()
	ctx, stop := context.WithCancel(context.Background())
	b.stop = stop
	if b.broker != nil {
		b.wg.Go(func() { b.listen(ctx) })
	}
	b.wg.Go(func() { b.refresh(ctx) })
	return b
}

// Close stops the background work and removes this replica's presence
// records. Waiters still blocked keep waiting until their contexts end.
func (b *Bus) Close() error {
	b.stop()
	b.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	return b.online.deleteAll(ctx, b.store, b.id)
}

// Post stores m (MessageStore.PostMessage, which fills in its ID, Seq,
// agent and skill) and then signals its waiters on every replica: the
// agent's inbox for a message to its workers, the channel's reply waiters
// otherwise. A message to the workers of an agent one of whose streams
// waits on this replica (Handoff) is stored delivered to that stream and
// handed to it instead, without a signal; a final reply to a call waiting
// in Ask on this replica is handed to it too (see answer.go), and the
// agent's streams on this replica learn that the message it answers (or a
// cancel withdraws) is acknowledged (Handoff.Acked). A failure to reach
// the Broker is logged, not returned: m is stored, and other replicas'
// waiters find it when woken for any reason.
func (b *Bus) Post(ctx context.Context, m *mcpgate.Message) error {
	return b.post(ctx, m, false)
}

// post is Post; fresh says that m's ID was made for this post (Ask), so
// that a store may hand m over before storing it (FirstHandingStore).
func (b *Bus) post(ctx context.Context, m *mcpgate.Message, fresh bool) error {
	if m.Type.ToAgent() {
		if err := b.postToAgent(ctx, m, fresh); err != nil {
			return err
		}
		if m.Type == mcpgate.MessageCancel {
			b.takers.ack(m.AgentID, m.InReplyTo)
		}
		return nil
	}
	a := b.asker(m)
	if a != nil && m.Type == mcpgate.MessageReplyDelta {
		a.noteDelta()
	}
	if a != nil && m.Type.Final() && b.handing != nil {
		return b.answer(ctx, m, a)
	}
	if err := b.store.PostMessage(ctx, m); err != nil {
		return err
	}
	if m.Type.Final() {
		b.takers.ack(m.AgentID, m.InReplyTo)
		if a != nil {
			b.give(a, m)
		}
	}
	if a != nil {
		a.notify() // its final reply, or a delta to read
	}
	b.signal(ctx, replyTopic(m.ChannelID))
	return nil
}

// answer stores m, the final reply the call a waits for, handing it to a
// before it is stored when a's claim says the store is bound to take it
// (and then vouching for it to a ClaimingStore, which need not check it
// again, nor commit it before it returns), and otherwise before its
// transaction commits (HandingStore), so that the call answers its client
// while the store works. Other waiters on the channel are woken once m's
// statements ran: a read of messages commits what is open first, so they
// find m. A reply handed over and then lost (its statements or its commit
// failed) is logged, and ends its call with the error unless the call
// answered with it already (a call that had deltas reads its reply from
// the store, which does not have it).
func (b *Bus) answer(ctx context.Context, m *mcpgate.Message, a *asker) error {
	handed := b.claim(m, a)
	var err error
	switch {
	case handed && b.claimed != nil: // claim gave m its agent and skill
		err = b.claimed.PostClaimedReply(ctx, m, func(err error) { b.replyLost(a, m, err) })
		if err == nil {
			b.signal(ctx, replyTopic(m.ChannelID))
		}
	default:
		err = b.handing.PostReplyHanded(ctx, m, func() {
			b.signal(ctx, replyTopic(m.ChannelID))
			if !handed {
				handed = true
				b.give(a, m)
				b.wake(a)
			}
		})
	}
	if err != nil {
		if handed {
			b.replyLost(a, m, err)
		}
		return err
	}
	b.takers.ack(m.AgentID, m.InReplyTo)
	return nil
}

// replyLost logs that the final reply m, handed to the call a, was not
// stored after all, and ends the call with err unless it answered
// already.
func (b *Bus) replyLost(a *asker, m *mcpgate.Message, err error) {
	b.logger.Error("bus: a reply handed to its call was not stored", "message", m.ID, "err", err)
	b.endCall(a, fmt.Errorf("store the reply: %w", err))
}

// claim hands the final reply m to the call a before m is stored, when
// a.claim takes it, and wakes the call; it reports whether it did. The
// call then answers while m's statements run: on this VM they were about
// a tenth of the round trip, on its critical path.
func (b *Bus) claim(m *mcpgate.Message, a *asker) bool {
	if !a.answers(m) {
		return false
	}
	m.Stamp() // as the store would, so that the call's copy has them too
	if m.AgentID == "" {
		m.AgentID = a.agentID
	}
	m.Skill = a.skill // the asked message's, its channel's: what the store gives m
	c, err := handed(m)
	if err != nil {
		return false // a body that cannot be copied is the store's to refuse
	}
	if !a.claim(c) {
		return false
	}
	b.wake(a)
	return true
}

// wake wakes the call a, handed its final reply, and lets it run on this
// thread at once: it is ready on this thread's queue, and would otherwise
// wait until this goroutine blocks (on the store) or another thread wakes
// to steal it. The channel's other waiters are woken once the reply is
// stored.
func (b *Bus) wake(a *asker) {
	a.notify()
	runtime.Gosched()
}

// asker returns the call of this replica waiting in Ask for m, a reply,
// when the bus hands replies over (it has no Broker), or nil.
func (b *Bus) asker(m *mcpgate.Message) *asker {
	if b.broker != nil || m.InReplyTo == "" {
		return nil
	}
	return b.askers.find(m.InReplyTo)
}

// give hands the stored final reply m to the waiting call a; a reply that
// cannot be copied is left for the call to read.
func (b *Bus) give(a *asker, m *mcpgate.Message) {
	c, err := handed(m)
	if err != nil {
		b.logger.Warn("bus: hand a reply over", "message", m.ID, "err", err)
		return
	}
	a.give(c)
}

// Inbox returns a channel that receives a signal whenever a message for
// the agent's workers is posted on any replica, and is closed when ctx
// ends. Signals coalesce: one signal may stand for several messages. Call
// Inbox before claiming messages, so that none posted in between is missed.
func (b *Bus) Inbox(ctx context.Context, agentID string) <-chan struct{} {
	topic := inboxTopic(agentID)
	c := b.hub.subscribe(topic)
	context.AfterFunc(ctx, func() {
		b.hub.unsubscribe(topic, c)
		close(c)
	})
	return c
}

// WakeInbox wakes the agent's inbox streams on every replica, as Post does
// for a message to the agent's workers: messages were released for them to
// claim.
func (b *Bus) WakeInbox(ctx context.Context, agentID string) {
	b.signal(ctx, inboxTopic(agentID))
}

// Topics: one per channel for reply waiters, one per agent for inboxes.
func replyTopic(channelID string) string { return "reply:" + channelID }
func inboxTopic(agentID string) string   { return "inbox:" + agentID }

// signal wakes the topic's waiters here and, through the Broker, on the
// other replicas, even when ctx has ended after the message was stored.
func (b *Bus) signal(ctx context.Context, topic string) {
	b.hub.signal(topic)
	if b.broker == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := b.broker.Publish(ctx, topic, []byte(b.id)); err != nil {
		b.logger.Warn("bus: publish", "topic", topic, "err", err)
	}
}

// listen relays the Broker's payloads to this replica's waiters until ctx
// ends.
func (b *Bus) listen(ctx context.Context) {
	for {
		err := b.broker.Subscribe(ctx, b.deliver)
		if ctx.Err() != nil {
			return
		}
		b.logger.Warn("bus: subscribe", "err", err)
		if !mcpgate.Sleep(ctx, resubscribeDelay) {
			return
		}
	}
}

// deliver wakes the waiters of a topic published by another replica, or
// every waiter when the Broker may have lost payloads (topic "").
func (b *Bus) deliver(topic string, payload []byte) {
	switch {
	case topic == "":
		b.hub.signalAll()
	case string(payload) != b.id: // this replica woke its own waiters in signal
		b.hub.signal(topic)
	}
}
