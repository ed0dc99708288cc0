package webhook

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// OutboxStore writes events with their deliveries (mcpgate.WebhookStore).
type OutboxStore interface {
	EnqueueEvent(ctx context.Context, e *mcpgate.Event, body []byte, giveUpAt time.Time) (int, error)
}

// Owners finds an agent, whose owner an event without a UserID belongs to.
type Owners interface {
	FindAgent(ctx context.Context, id string) (*mcpgate.Agent, error)
}

// Recorder counts what happens to events and deliveries; metrics.Metrics
// implements it.
type Recorder interface {
	WebhookEventDropped()
	ObserveWebhookAttempt(outcome string, d time.Duration)
}

// DefaultQueueSize bounds the events waiting to be written.
const DefaultQueueSize = 4096

// OutboxOptions configure an Outbox. Store is required.
type OutboxOptions struct {
	Store  OutboxStore
	Owners Owners // optional: events without a UserID are then dropped
	// QueueSize bounds the events waiting; default DefaultQueueSize.
	QueueSize int
	// RetryFor is how long each delivery is retried; default
	// DefaultRetryFor.
	RetryFor time.Duration
	// Wake is told when deliveries were written; optional.
	Wake     func()
	Recorder Recorder // optional
	Logger   *slog.Logger
	// Webhooks, when set, lets the outbox keep a snapshot of which users'
	// webhooks want which events and drop the others before they reach
	// the database; Refresh reloads it after a change, and it is reloaded
	// every RefreshEvery (default DefaultRefreshEvery) in any case.
	Webhooks     Lister
	RefreshEvery time.Duration
}

// Outbox takes published events without ever blocking and writes each,
// with one delivery per webhook that wants it, in one transaction.
type Outbox struct {
	opts    OutboxOptions
	queue   chan *mcpgate.Event
	dropped atomic.Int64
	subs    subscriptions
}

// NewOutbox returns an Outbox; run Run in a goroutine.
func NewOutbox(opts *OutboxOptions) *Outbox {
	o := &Outbox{opts: *opts}
	if o.opts.QueueSize <= 0 {
		o.opts.QueueSize = DefaultQueueSize
	}
	if o.opts.RetryFor <= 0 {
		o.opts.RetryFor = DefaultRetryFor
	}
	if o.opts.Wake == nil {
		o.opts.Wake = func() {}
	}
	if o.opts.Logger == nil {
		o.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if o.opts.RefreshEvery <= 0 {
		o.opts.RefreshEvery = DefaultRefreshEvery
	}
	o.queue = make(chan *mcpgate.Event, o.opts.QueueSize)
	return o
}

// Wants reports whether a webhook of the user may want events of
// eventType: Publish drops the others. (Without OutboxOptions.Webhooks,
// before the first Refresh, after a failed one, or for an event whose
// owner is not known yet, it wants every event.)
func (o *Outbox) Wants(userID, eventType string) bool {
	return o.opts.Webhooks == nil || o.subs.wants(userID, eventType)
}

// Publish queues e, setting its ID and CreatedAt when unset. It never
// blocks: when the queue is full the event is dropped, counted and logged.
func (o *Outbox) Publish(_ context.Context, e *mcpgate.Event) {
	if !o.Wants(e.UserID, e.Type) {
		return // no webhook wants it
	}
	if e.ID == "" {
		e.ID = mcpgate.NewID("evt_")
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now().UTC()
	}
	select {
	case o.queue <- e:
	default:
		o.drop(e, "the queue is full")
	}
}

// drop counts and logs an event that will not be delivered.
func (o *Outbox) drop(e *mcpgate.Event, why string) {
	o.dropped.Add(1)
	if o.opts.Recorder != nil {
		o.opts.Recorder.WebhookEventDropped()
	}
	o.opts.Logger.Warn("webhook event dropped", "event", e.ID, "type", e.Type, "reason", why)
}

// Dropped returns how many events were dropped so far.
func (o *Outbox) Dropped() int64 { return o.dropped.Load() }

// Run writes queued events until ctx ends, then writes those still queued.
func (o *Outbox) Run(ctx context.Context) {
	tick := time.NewTicker(o.opts.RefreshEvery)
	defer tick.Stop()
	o.Refresh(ctx)
	for {
		select {
		case e := <-o.queue:
			o.write(ctx, e)
		case <-tick.C:
			o.Refresh(ctx)
		case <-ctx.Done():
			o.flush()
			return
		}
	}
}

// Refresh reloads which users' webhooks want which events (a no-op
// without OutboxOptions.Webhooks). Call it after a webhook is made or
// deleted; until it returns, the outbox may still drop events for a new
// webhook. A failed load lets every event through.
func (o *Outbox) Refresh(ctx context.Context) {
	if o.opts.Webhooks == nil {
		return
	}
	if err := o.subs.load(ctx, o.opts.Webhooks); err != nil && ctx.Err() == nil {
		o.opts.Logger.Warn("webhooks: reloading the subscriptions failed; every event goes to the database until the next reload", "err", err)
	}
}

// flush writes what is queued, for at most a few seconds.
func (o *Outbox) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		select {
		case e := <-o.queue:
			o.write(ctx, e)
		default:
			return
		}
	}
}

// write stores one event and its deliveries.
func (o *Outbox) write(ctx context.Context, e *mcpgate.Event) {
	if e.UserID == "" && e.AgentID != "" && o.opts.Owners != nil {
		if a, err := o.opts.Owners.FindAgent(ctx, e.AgentID); err == nil {
			e.UserID = a.OwnerID
		}
	}
	if e.UserID == "" {
		return // nobody's webhooks want it
	}
	body, err := json.Marshal(e)
	if err != nil {
		o.drop(e, err.Error())
		return
	}
	n, err := o.enqueue(ctx, e, body)
	if err != nil {
		o.drop(e, err.Error())
		return
	}
	if n > 0 {
		o.opts.Wake()
	}
}

// enqueue writes the event, trying three times over about a second when
// the database refuses (a failover, a busy SQLite writer).
func (o *Outbox) enqueue(ctx context.Context, e *mcpgate.Event, body []byte) (int, error) {
	var err error
	for try, wait := 0, 200*time.Millisecond; try < 3; try, wait = try+1, wait*2 {
		var n int
		if n, err = o.opts.Store.EnqueueEvent(ctx, e, body, e.CreatedAt.Add(o.opts.RetryFor)); err == nil {
			return n, nil
		}
		if try < 2 && !mcpgate.Sleep(ctx, wait) {
			break
		}
	}
	return 0, err
}
