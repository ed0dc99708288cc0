package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
)

const deliveryColumns = `id, webhook_id, event_id, event_type, state, attempts, next_at, created_at, give_up_at`

// EnqueueEvent stores the event and one delivery for each of its user's
// webhooks that wants it, in one transaction. An event no webhook wants is
// not stored.
func (s *Store) EnqueueEvent(ctx context.Context, e *mcpgate.Event, body []byte, giveUpAt time.Time) (int, error) {
	n := 0
	err := s.withTx(ctx, func(tx *Store) error {
		hooks, err := tx.ListWebhooks(ctx, e.UserID)
		if err != nil || e.UserID == "" {
			return err
		}
		for _, w := range hooks {
			if !w.Wants(e.Type) {
				continue
			}
			if n == 0 {
				if err := tx.insertEvent(ctx, e, body); err != nil {
					return err
				}
			}
			d := &mcpgate.WebhookDelivery{WebhookID: w.ID, EventID: e.ID, EventType: e.Type, NextAt: now(), GiveUpAt: giveUpAt}
			if err := tx.insertDelivery(ctx, d); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("enqueue event %s: %w", e.ID, err)
	}
	return n, nil
}

// insertEvent stores an event's row.
func (s *Store) insertEvent(ctx context.Context, e *mcpgate.Event, body []byte) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO webhook_events (id, type, user_id, agent_id, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, e.ID, e.Type, e.UserID, e.AgentID, string(body), micros(e.CreatedAt))
	return err
}

// insertDelivery stores a new pending delivery, setting its ID and
// CreatedAt.
func (s *Store) insertDelivery(ctx context.Context, d *mcpgate.WebhookDelivery) error {
	d.ID, d.State, d.CreatedAt = mcpgate.NewID("dlv_"), mcpgate.DeliveryPending, now()
	d.NextAt, d.GiveUpAt = normalize(d.NextAt), normalize(d.GiveUpAt)
	_, err := s.write.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+deliveryColumns+`)
		VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8)`, d.ID, d.WebhookID, d.EventID, d.EventType, string(d.State),
		micros(d.NextAt), micros(d.CreatedAt), micros(d.GiveUpAt))
	return err
}

// claimDeliveries leases the oldest due deliveries. The outer WHERE
// repeats the conditions, so that on PostgreSQL a row another claim
// updated first is checked again, found leased and skipped.
const claimDeliveries = `UPDATE webhook_deliveries SET attempts = attempts + 1, next_at = $1
	WHERE id IN (SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_at <= $2
		ORDER BY next_at LIMIT $3)
	AND state = 'pending' AND next_at <= $2
	RETURNING id`

// ClaimDeliveries leases up to limit due deliveries for one attempt each
// and returns them with their webhook's URL and secret and the body.
func (s *Store) ClaimDeliveries(ctx context.Context, at time.Time, lease time.Duration, limit int) ([]*mcpgate.DueDelivery, error) {
	rows, err := s.write.QueryContext(ctx, claimDeliveries, micros(at.Add(lease)), micros(at), limit)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	ids, err := collect(rows, scanID)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	args, marks := inList(ids)
	rows, err = s.write.QueryContext(ctx, `SELECT d.id, d.webhook_id, d.event_id, d.event_type, d.state, d.attempts,
		d.next_at, d.created_at, d.give_up_at, w.url, w.sealed_secret, e.body
		FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN webhook_events e ON e.id = d.event_id
		WHERE d.id IN (`+marks+`) ORDER BY d.next_at`, args...)
	if err != nil {
		return nil, fmt.Errorf("read claimed deliveries: %w", err)
	}
	return collect(rows, scanDue)
}

// FinishAttempt logs the attempt and moves its delivery on, unless the
// delivery was claimed again since.
func (s *Store) FinishAttempt(ctx context.Context, a *mcpgate.WebhookAttempt, out mcpgate.DeliveryOutcome) error {
	return s.withTx(ctx, func(tx *Store) error {
		_, err := tx.write.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, at, status, latency_ms, response, error)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
			a.DeliveryID, a.Attempt, micros(a.Time), a.Status, a.LatencyMS, a.Response, a.Error)
		if err != nil {
			return fmt.Errorf("log attempt of %s: %w", a.DeliveryID, err)
		}
		_, err = tx.write.ExecContext(ctx, `UPDATE webhook_deliveries SET state = $1, next_at = $2
			WHERE id = $3 AND attempts = $4 AND state = 'pending'`, string(out.State), micros(out.NextAt), a.DeliveryID, a.Attempt)
		if err != nil {
			return fmt.Errorf("finish attempt of %s: %w", a.DeliveryID, err)
		}
		return nil
	})
}

// ListDeliveries returns a webhook's deliveries, newest first, with their
// attempt logs.
func (s *Store) ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*mcpgate.WebhookDelivery, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE webhook_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2`, webhookID, min(limit, 1000))
	if err != nil {
		return nil, fmt.Errorf("list deliveries of %s: %w", webhookID, err)
	}
	list, err := collect(rows, scanDelivery)
	if err != nil || len(list) == 0 {
		return list, err
	}
	return list, s.attachLogs(ctx, list)
}

// attachLogs fills in the attempt logs of the deliveries.
func (s *Store) attachLogs(ctx context.Context, list []*mcpgate.WebhookDelivery) error {
	byID := make(map[string]*mcpgate.WebhookDelivery, len(list))
	ids := make([]string, len(list))
	for i, d := range list {
		byID[d.ID], ids[i], d.Log = d, d.ID, []*mcpgate.WebhookAttempt{}
	}
	args, marks := inList(ids)
	rows, err := s.read.QueryContext(ctx, `SELECT delivery_id, attempt, at, status, latency_ms, response, error
		FROM webhook_attempts WHERE delivery_id IN (`+marks+`) ORDER BY delivery_id, attempt`, args...)
	if err != nil {
		return fmt.Errorf("read delivery logs: %w", err)
	}
	logs, err := collect(rows, scanAttempt)
	for _, a := range logs {
		d := byID[a.DeliveryID]
		d.Log = append(d.Log, a)
	}
	return err
}

// Redeliver makes a new pending delivery of the event of the webhook's
// delivery id.
func (s *Store) Redeliver(ctx context.Context, webhookID, id string, at, giveUpAt time.Time) (*mcpgate.WebhookDelivery, error) {
	old, err := scanDelivery(s.read.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE id = $1 AND webhook_id = $2`, id, webhookID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "delivery %q of webhook %q not found", id, webhookID)
	} else if err != nil {
		return nil, fmt.Errorf("find delivery %s: %w", id, err)
	}
	d := &mcpgate.WebhookDelivery{WebhookID: webhookID, EventID: old.EventID, EventType: old.EventType, NextAt: at, GiveUpAt: giveUpAt}
	if err := s.insertDelivery(ctx, d); err != nil {
		return nil, fmt.Errorf("redeliver %s: %w", id, err)
	}
	d.Log = []*mcpgate.WebhookAttempt{}
	return d, nil
}

// inList returns ids as arguments and their placeholders, "$1, $2, …".
func inList(ids []string) ([]any, string) {
	args := make([]any, len(ids))
	marks := make([]string, len(ids))
	for i, id := range ids {
		args[i], marks[i] = id, fmt.Sprintf("$%d", i+1)
	}
	return args, strings.Join(marks, ", ")
}

// scanID reads a row of one string column.
func scanID(sc scanner) (string, error) {
	var id string
	return id, sc.Scan(&id)
}

// deliveryFields returns the scan targets of deliveryColumns and a
// function that converts the times once scanned.
func deliveryFields(d *mcpgate.WebhookDelivery) ([]any, func()) {
	var state string
	var next, created, giveUp int64
	fields := []any{&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &state, &d.Attempts, &next, &created, &giveUp}
	return fields, func() {
		d.State, d.NextAt, d.CreatedAt, d.GiveUpAt = mcpgate.DeliveryState(state), fromMicros(next), fromMicros(created), fromMicros(giveUp)
	}
}

// scanDelivery reads one delivery row.
func scanDelivery(sc scanner) (*mcpgate.WebhookDelivery, error) {
	var d mcpgate.WebhookDelivery
	fields, done := deliveryFields(&d)
	if err := sc.Scan(fields...); err != nil {
		return nil, err
	}
	done()
	return &d, nil
}

// scanDue reads a claimed delivery with its webhook's URL and secret and
// the event's body.
func scanDue(sc scanner) (*mcpgate.DueDelivery, error) {
	var d mcpgate.DueDelivery
	var body string
	fields, done := deliveryFields(&d.WebhookDelivery)
	if err := sc.Scan(append(fields, &d.URL, &d.SealedSecret, &body)...); err != nil {
		return nil, err
	}
	done()
	d.Body = []byte(body)
	return &d, nil
}

// scanAttempt reads one attempt log row.
func scanAttempt(sc scanner) (*mcpgate.WebhookAttempt, error) {
	var a mcpgate.WebhookAttempt
	var at int64
	if err := sc.Scan(&a.DeliveryID, &a.Attempt, &at, &a.Status, &a.LatencyMS, &a.Response, &a.Error); err != nil {
		return nil, err
	}
	a.Time = fromMicros(at)
	return &a, nil
}

// The statements of the webhook retention sweep: a batch of finished
// deliveries, oldest first (webhook_deliveries_finished, partial on the
// literal condition), and the old events no delivery names any more
// (webhook_events_created_at, and webhook_deliveries_event for each).
const (
	finishedDeliveriesQuery = `SELECT id FROM webhook_deliveries WHERE state <> 'pending' AND created_at < $1
		ORDER BY created_at LIMIT $2`
	orphanEventsQuery = `DELETE FROM webhook_events WHERE created_at < $1
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`
)

// DeleteDeliveriesBefore deletes a batch of finished deliveries made
// before before, their logs, and the events left without deliveries.
func (s *Store) DeleteDeliveriesBefore(ctx context.Context, before time.Time, limit int) (int64, error) {
	var n int64
	err := s.withTx(ctx, func(tx *Store) error {
		rows, err := tx.write.QueryContext(ctx, finishedDeliveriesQuery, micros(before), limit)
		if err != nil {
			return err
		}
		ids, err := collect(rows, scanID)
		if err != nil || len(ids) == 0 {
			return err
		}
		args, marks := inList(ids)
		for _, q := range []string{`DELETE FROM webhook_attempts WHERE delivery_id IN (`, `DELETE FROM webhook_deliveries WHERE id IN (`} {
			if _, err := tx.write.ExecContext(ctx, q+marks+`)`, args...); err != nil {
				return err
			}
		}
		n = int64(len(ids))
		_, err = tx.write.ExecContext(ctx, orphanEventsQuery, micros(before))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete deliveries: %w", err)
	}
	return n, nil
}
