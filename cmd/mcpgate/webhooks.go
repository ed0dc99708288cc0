package main

import (
	"context"
	"flag"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/events"
	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/webhook"
)

// webhookFlags are serve's flags for webhook deliveries.
type webhookFlags struct {
	Backoff time.Duration
	Timeout time.Duration
}

// register adds the flags to fs.
func (f *webhookFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.Backoff, "webhook-backoff", webhook.DefaultBackoff, "wait before a webhook delivery's first retry, doubled for each one after (up to 1h, with jitter); retries stop after 24h")
	fs.DurationVar(&f.Timeout, "webhook-timeout", webhook.DefaultTimeout, "how long one webhook delivery attempt may take")
}

// problem names a flag value serve cannot run with, or returns "".
func (f *webhookFlags) problem() string {
	switch {
	case f.Backoff <= 0:
		return "--webhook-backoff must be a positive duration such as 10s"
	case f.Timeout <= 0:
		return "--webhook-timeout must be a positive duration such as 10s"
	}
	return ""
}

// webhooks is the webhook machinery: the service the API manages them
// through, and the outbox and deliverer start runs.
type webhooks struct {
	service   *webhook.Service
	outbox    *webhook.Outbox
	deliverer *webhook.Deliverer
	bus       *bus.Bus
}

// webhooksTopic is the bus topic signalled when a webhook is made or
// deleted: every replica's outbox reloads what it delivers.
const webhooksTopic = "webhooks"

// newWebhooks builds the webhook machinery, delivering through guard, and
// subscribes the outbox to every event published on hub, approvals' turned
// into approval.requested and approval.decided. A webhook made or deleted
// is signalled on b, so that every replica's outbox hears of it.
func (m *Main) newWebhooks(hub *events.Hub, guard *netguard.Guard, met *metrics.Metrics, b *bus.Bus) *webhooks {
	policy, rec, f := netguard.Policy{AllowPrivate: m.Config.AllowPrivate}, met.NewWebhooks(), m.Config.webhooks
	w := &webhooks{deliverer: webhook.NewDeliverer(&webhook.DelivererOptions{
		Store: m.store, Secrets: m.box, Client: guard.Client(policy), Timeout: f.Timeout, Backoff: f.Backoff,
		Recorder: rec, Logger: m.logger,
	}), bus: b}
	w.outbox = webhook.NewOutbox(&webhook.OutboxOptions{Store: m.store, Owners: m.store, Wake: w.deliverer.Wake, Recorder: rec, Logger: m.logger,
		Webhooks: m.store})
	w.service = webhook.NewService(&webhook.ServiceOptions{Store: m.store, Sealer: m.box, Policy: policy, Wake: w.deliverer.Wake,
		Changed: w.changed})
	hub.OnPublishWanted(w.outbox.Publish, w.outbox.Wants)
	hub.OnApprovalRequested(func(a *mcpgate.Approval) {
		hub.Publish(context.Background(), webhook.ApprovalEvent(mcpgate.EventApprovalRequested, a))
	})
	hub.OnApprovalDecided(func(a *mcpgate.Approval) {
		hub.Publish(context.Background(), webhook.ApprovalEvent(mcpgate.EventApprovalDecided, a))
	})
	return w
}

// changed reloads this replica's outbox at once, so that the next call's
// event reaches a webhook just made, and tells the other replicas.
func (w *webhooks) changed(ctx context.Context) {
	w.outbox.Refresh(ctx)
	w.bus.Signal(ctx, webhooksTopic)
}

// run runs the outbox and the deliverer until ctx ends, and sweeps
// finished deliveries older than the audit log's retention hourly.
func (w *webhooks) run(ctx context.Context, m *Main) {
	changes := w.bus.Watch(ctx, webhooksTopic)
	m.workers.Go(func() { w.outbox.Run(ctx) })
	m.workers.Go(func() {
		for range changes {
			w.outbox.Refresh(ctx)
		}
	})
	m.workers.Go(func() { w.deliverer.Run(ctx) })
	m.workers.Go(func() { m.sweepDeliveries(ctx) })
}

// sweepDeliveries deletes finished deliveries older than the retention,
// in batches, hourly.
func (m *Main) sweepDeliveries(ctx context.Context) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		sweepBatches(ctx, m, "webhook deliveries", func() (int64, error) {
			return m.store.DeleteDeliveriesBefore(ctx, time.Now().Add(-m.retention), sweepBatch)
		})
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
