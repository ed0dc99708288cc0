package postgres

import (
	"context"
	"fmt"
	"slices"
)

// Grouped publishing. PostgreSQL commits the transactions that NOTIFY one
// after another: each holds a lock on the notification queue from just
// before its commit until the commit ends, so that notifications arrive in
// commit order. Under load the replicas' posts then queue for that lock,
// two per agent round trip (the chat_message's signal and the reply's).
// Notifications published while one is being sent are therefore sent
// together: the first to find none in flight sends every one queued by
// then in one statement (one transaction, one turn of the lock), and when
// it is done it hands the sending to the first queued meanwhile (package
// batch). Each Publish returns once the statement holding its notification
// committed.
// Identical notifications (one replica signalling one topic twice) are
// sent once, as PostgreSQL folds them within a transaction anyway.

// publishQuery sends each text of the array $2 on channel $1.
const publishQuery = `SELECT pg_notify($1, t) FROM unnest(CAST($2 AS TEXT[])) AS t`

// publishOp is one notification waiting to be sent, and the outcome of
// the statement that sent it.
type publishOp struct {
	text string
	err  error
}

// publish sends text on the Broker's channel, with whatever other
// notifications are queued when its turn comes.
func (b *Broker) publish(ctx context.Context, text string) error {
	op := &publishOp{text: text}
	b.pub.Run(op, func(ops []*publishOp) {
		err := b.send(ctx, ops)
		for _, o := range ops {
			o.err = err
		}
	})
	return op.err
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
