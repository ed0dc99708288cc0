package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
)

const webhookColumns = `id, user_id, url, events, sealed_secret, created_at`

// CreateWebhook stores w, setting its ID when empty and CreatedAt.
func (s *Store) CreateWebhook(ctx context.Context, w *mcpgate.Webhook) error {
	if w.ID == "" {
		w.ID = mcpgate.NewID("wh_")
	}
	w.CreatedAt = now()
	_, err := s.write.ExecContext(ctx, `INSERT INTO webhooks (`+webhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		w.ID, w.UserID, w.URL, strings.Join(w.Events, " "), w.SealedSecret, micros(w.CreatedAt))
	if s.d.Violation(err).Kind == UniqueViolation {
		return mcpgate.Errorf(mcpgate.ECONFLICT, "webhook %q exists", w.ID)
	} else if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	return nil
}

// FindWebhook returns a webhook; ENOTFOUND if unknown.
func (s *Store) FindWebhook(ctx context.Context, id string) (*mcpgate.Webhook, error) {
	w, err := scanWebhook(s.read.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "webhook %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find webhook %s: %w", id, err)
	}
	return w, nil
}

// ListWebhooks returns a user's webhooks, or all when userID is "",
// oldest first.
func (s *Store) ListWebhooks(ctx context.Context, userID string) ([]*mcpgate.Webhook, error) {
	w := &where{}
	w.equal("user_id", userID)
	rows, err := s.read.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhooks`+w.String()+` ORDER BY created_at, id`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return collect(rows, scanWebhook)
}

// DeleteWebhook deletes a webhook, its deliveries and their logs.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	return s.withTx(ctx, func(tx *Store) error {
		for _, q := range []string{
			`DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = $1)`,
			`DELETE FROM webhook_deliveries WHERE webhook_id = $1`,
		} {
			if _, err := tx.write.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("delete webhook %s: %w", id, err)
			}
		}
		return tx.deleteRow(ctx, mcpgate.Errorf(mcpgate.ENOTFOUND, "webhook %q not found", id), `DELETE FROM webhooks WHERE id = $1`, id)
	})
}

// scanWebhook reads one webhook row.
func scanWebhook(sc scanner) (*mcpgate.Webhook, error) {
	var w mcpgate.Webhook
	var events string
	var created int64
	if err := sc.Scan(&w.ID, &w.UserID, &w.URL, &events, &w.SealedSecret, &created); err != nil {
		return nil, err
	}
	w.Events, w.CreatedAt = strings.Fields(events), fromMicros(created)
	return &w, nil
}
