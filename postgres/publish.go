package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Grouped publishing. PostgreSQL commits the transactions that NOTIFY one
// after another: each holds a lock on the notification queue from just
// before its commit until the commit ends, so that notifications arrive in
// commit order. Under load the replicas' posts then queue for that lock,
// two per agent round trip (the chat_message's signal and the reply's).
// Notifications published while one is being sent are therefore sent
// together: the first to find none in flight sends every one queued by
// then in one statement (one transaction, one turn of the lock), and when
// it is done it hands the sending to the first queued meanwhile. Each
// Publish returns once the statement holding its notification committed.
// Identical notifications (one replica signalling one topic twice) are
// sent once, as PostgreSQL folds them within a transaction anyway.

// publishQuery sends each text of the array $2 on channel $1.
const publishQuery = `SELECT pg_notify($1, t) FROM unnest(CAST($2 AS TEXT[])) AS t`

// publishOp is one notification waiting to be sent.
type publishOp struct {
	text string
	done chan publishResult
}

// publishResult ends a wait: the outcome of the statement that sent the
// notification, or lead when the op's caller is to send the next batch.
type publishResult struct {
	err  error
	lead bool
}

// publisher queues notifications for the next batch.
type publisher struct {
	mu      sync.Mutex
	queue   []*publishOp
	sending bool
	// batches counts the statements sent, for tests.
	batches int
	// hold, when set (tests), is called by a sender before it takes the
	// queue.
	hold func()
}

// enqueue queues op and reports whether its caller is to send a batch now.
func (p *publisher) enqueue(op *publishOp) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, op)
	if p.sending {
		return false
	}
	p.sending = true
	return true
}

// take returns the queued notifications for a batch.
func (p *publisher) take() []*publishOp {
	if p.hold != nil {
		p.hold()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ops := p.queue
	p.queue = nil
	p.batches++
	return ops
}

// handOver passes the sending to the first notification queued meanwhile,
// or gives it up when there is none.
func (p *publisher) handOver() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		p.sending = false
		return
	}
	p.queue[0].done <- publishResult{lead: true}
}

// publish sends text on the Broker's channel, with whatever other
// notifications are queued when its turn comes.
func (b *Broker) publish(ctx context.Context, text string) error {
	op := &publishOp{text: text, done: make(chan publishResult, 1)}
	if !b.pub.enqueue(op) {
		if r := <-op.done; !r.lead {
			return r.err
		}
	}
	ops := b.pub.take()
	err := b.send(ctx, ops)
	b.pub.handOver()
	for _, o := range ops {
		if o != op {
			o.done <- publishResult{err: err}
		}
	}
	return err
}

// send notifies the texts of ops in one statement, under the context of
// the sender's Publish (the bus gives each the same timeout, detached from
// the request's cancellation).
func (b *Broker) send(ctx context.Context, ops []*publishOp) error {
	texts := make([]string, 0, len(ops))
	for _, o := range ops {
		texts = append(texts, o.text)
	}
	slices.Sort(texts)
	texts = slices.Compact(texts)
	if _, err := b.db.ExecContext(ctx, publishQuery, b.channel, texts); err != nil {
		return fmt.Errorf("notify %d: %w", len(texts), err)
	}
	return nil
}
