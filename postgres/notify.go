package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/batch"
)

// Broker defaults.
const (
	// DefaultChannel is the notification channel the replicas share.
	DefaultChannel = "mcpgate_bus"
	// ListenerName is the application_name of the listening connection,
	// which tells it apart in pg_stat_activity.
	ListenerName = "mcpgate-listener"
	// maxPayload is the largest notification PostgreSQL accepts, in bytes.
	maxPayload = 7999
	// pingEvery is how long the listener waits for a notification before
	// it checks that its connection is still alive.
	pingEvery = 30 * time.Second
	// Reconnection backoff of the listener.
	minBackoff, maxBackoff = 100 * time.Millisecond, 5 * time.Second
)

// BrokerOptions configure a Broker.
type BrokerOptions struct {
	// Channel is the notification channel; DefaultChannel when empty. All
	// replicas of one gateway must use the same one.
	Channel string
	// Logger receives lost and restored connections; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Broker carries the bus's signals between replicas with PostgreSQL's
// LISTEN/NOTIFY. Every topic travels on one notification channel, and each
// process keeps one dedicated connection listening to it, so a replica
// receives every replica's signals and picks the topics it has waiters
// for. The payload of a notification is {"t": topic, "p": base64 payload}.
type Broker struct {
	cfg     *pgx.ConnConfig
	db      *sql.DB // publishes
	channel string
	logger  *slog.Logger
	pub     batch.Queue[*publishOp] // notifications waiting to be sent (publish.go)
}

// notification is the JSON payload of a NOTIFY.
type notification struct {
	Topic   string `json:"t"`
	Payload []byte `json:"p"`
}

// OpenBroker returns a Broker on the database named by dsn, checking that
// it answers. Close releases its connections.
func OpenBroker(ctx context.Context, dsn string, opts *BrokerOptions) (*Broker, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres dsn: %w", err)
	}
	b := &Broker{cfg: cfg, channel: DefaultChannel, logger: slog.Default()}
	if opts != nil && opts.Channel != "" {
		b.channel = opts.Channel
	}
	if opts != nil && opts.Logger != nil {
		b.logger = opts.Logger
	}
	b.db = stdlib.OpenDB(*cfg)
	b.db.SetMaxIdleConns(4)
	if err := b.db.PingContext(ctx); err != nil {
		_ = b.db.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return b, nil
}

// Close closes the connections Publish uses. Listening stops when the
// context given to Subscribe ends.
func (b *Broker) Close() error { return b.db.Close() }

// Publish notifies every listener, this process's included, of payload on
// topic. The notification is sent when the statement commits, at once, or
// together with those published meanwhile when another is being sent.
func (b *Broker) Publish(ctx context.Context, topic string, payload []byte) error {
	text, err := json.Marshal(notification{Topic: topic, Payload: payload})
	if err != nil {
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	if len(text) > maxPayload {
		return fmt.Errorf("publish %s: notification of %d bytes exceeds %d", topic, len(text), maxPayload)
	}
	if err := b.publish(ctx, string(text)); err != nil {
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	return nil
}

// Subscribe listens on one dedicated connection and calls fn with the
// topic and payload of every notification, until ctx ends; then it
// returns ctx.Err(). When the connection is lost it reconnects with
// backoff. After each successful LISTEN, the first and every later one, it
// calls fn("", nil): notifications sent while it was not listening are
// lost, so whatever waits for one must look again.
func (b *Broker) Subscribe(ctx context.Context, fn func(topic string, payload []byte)) error {
	backoff := minBackoff
	for {
		listened, err := b.listen(ctx, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if listened {
			backoff = minBackoff
		}
		b.logger.Warn("postgres broker: listening connection lost; reconnecting", "in", backoff, "err", err)
		if !mcpgate.Sleep(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// listen connects, listens and relays notifications to fn until the
// connection fails or ctx ends. listened says whether LISTEN succeeded.
func (b *Broker) listen(ctx context.Context, fn func(topic string, payload []byte)) (listened bool, err error) {
	cfg := b.cfg.Copy()
	cfg.RuntimeParams["application_name"] = ListenerName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{b.channel}.Sanitize()); err != nil {
		return false, err
	}
	fn("", nil)
	for {
		if err := b.receive(ctx, conn, fn); err != nil {
			return true, err
		}
	}
}

// receive waits up to pingEvery for one notification and relays it; when
// none comes, it pings the server, so that a dead connection is noticed.
func (b *Broker) receive(ctx context.Context, conn *pgx.Conn, fn func(topic string, payload []byte)) error {
	wctx, cancel := context.WithTimeout(ctx, pingEvery)
	n, err := conn.WaitForNotification(wctx)
	cancel()
	switch {
	case err == nil:
		b.relay(n, fn)
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		return conn.Ping(ctx)
	}
	return err
}

// relay decodes a notification and passes it to fn.
func (b *Broker) relay(n *pgconn.Notification, fn func(topic string, payload []byte)) {
	var msg notification
	if err := json.Unmarshal([]byte(n.Payload), &msg); err != nil || msg.Topic == "" {
		b.logger.Warn("postgres broker: malformed notification", "channel", n.Channel, "err", err)
		return
	}
	fn(msg.Topic, msg.Payload)
}
