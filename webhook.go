package mcpgate

import (
	"context"
	"time"
)

// Webhook is a user's subscription to events of the agents they own: each
// event of one of Events is POSTed to URL, signed with the webhook's secret.
type Webhook struct {
	ID     string   `json:"id"`
	UserID string   `json:"user_id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// SealedSecret is the signing secret encrypted at rest; it never
	// leaves the gateway.
	SealedSecret string    `json:"-"`
	CreatedAt    time.Time `json:"created_at"`
}

// Wants reports whether the webhook subscribes to events of type t.
func (w *Webhook) Wants(t string) bool {
	for _, e := range w.Events {
		if e == t {
			return true
		}
	}
	return false
}

// DeliveryState is where a delivery stands.
type DeliveryState string

// The states of a delivery: pending until an attempt succeeds (2xx) or
// the retries run out.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliverySucceeded DeliveryState = "succeeded"
	DeliveryFailed    DeliveryState = "failed"
)

// WebhookDelivery is one event to deliver to one webhook: an outbox row, retried
// until it succeeds or GiveUpAt passes.
type WebhookDelivery struct {
	ID        string        `json:"id"`
	WebhookID string        `json:"webhook_id"`
	EventID   string        `json:"event_id"`
	EventType string        `json:"event_type"`
	State     DeliveryState `json:"state"`
	// Attempts counts the attempts started; NextAt is when the next one is
	// due (or, while one runs, when its lease ends).
	Attempts  int       `json:"attempts"`
	NextAt    time.Time `json:"next_at"`
	CreatedAt time.Time `json:"created_at"`
	GiveUpAt  time.Time `json:"give_up_at"`
	// Log holds the attempts made, oldest first (lists fill it).
	Log []*WebhookAttempt `json:"log"`
}

// WebhookAttempt is the record of one attempt at a delivery.
type WebhookAttempt struct {
	DeliveryID string    `json:"-"`
	Attempt    int       `json:"attempt"`
	Time       time.Time `json:"time"`
	// Status is the receiver's HTTP status, 0 when none came.
	Status    int   `json:"status"`
	LatencyMS int64 `json:"latency_ms"`
	// Response is the start of the receiver's answer (at most 1 KiB).
	Response string `json:"response,omitempty"`
	Error    string `json:"error,omitempty"`
}

// DueDelivery is a delivery claimed for an attempt, with what the attempt
// needs: where to, the sealed secret and the exact body to sign.
type DueDelivery struct {
	WebhookDelivery
	URL          string
	SealedSecret string
	Body         []byte
}

// DeliveryOutcome is how an attempt ended for its delivery: its new state
// and, when still pending, when the next attempt is due.
type DeliveryOutcome struct {
	State  DeliveryState
	NextAt time.Time
}

// WebhookStore keeps webhooks and their outbox.
type WebhookStore interface {
	// CreateWebhook stores w, setting its ID when empty and CreatedAt.
	CreateWebhook(ctx context.Context, w *Webhook) error
	// FindWebhook returns a webhook; ENOTFOUND if unknown.
	FindWebhook(ctx context.Context, id string) (*Webhook, error)
	// ListWebhooks returns a user's webhooks, or everyone's when userID is
	// "", oldest first.
	ListWebhooks(ctx context.Context, userID string) ([]*Webhook, error)
	// DeleteWebhook deletes a webhook with its deliveries; ENOTFOUND if
	// unknown.
	DeleteWebhook(ctx context.Context, id string) error
	// EnqueueEvent stores the event (body is its delivery body) and, in
	// the same transaction, one pending delivery due at once for each of
	// e.UserID's webhooks that wants e.Type, giving up at giveUpAt. It
	// returns how many deliveries it made.
	EnqueueEvent(ctx context.Context, e *Event, body []byte, giveUpAt time.Time) (int, error)
	// ClaimDeliveries marks up to limit pending deliveries due at now as
	// attempted (Attempts+1, NextAt = now+lease) and returns them. A
	// delivery is claimed by one caller only, across processes.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*DueDelivery, error)
	// FinishAttempt logs the attempt a and moves its delivery to out, in
	// one transaction, unless the delivery was claimed again since (its
	// Attempts moved past a.Attempt): then only the log is written.
	FinishAttempt(ctx context.Context, a *WebhookAttempt, out DeliveryOutcome) error
	// ListDeliveries returns a webhook's deliveries, newest first, with
	// their attempt logs.
	ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*WebhookDelivery, error)
	// Redeliver makes a new pending delivery, due at now, of the event of
	// the webhook's delivery id, giving up at giveUpAt. ENOTFOUND when the
	// webhook has no such delivery.
	Redeliver(ctx context.Context, webhookID, id string, now, giveUpAt time.Time) (*WebhookDelivery, error)
	// DeleteDeliveriesBefore deletes up to limit finished (succeeded or
	// failed) deliveries made before before, with their logs, then the
	// events made before before that no delivery refers to. It returns
	// how many deliveries it deleted.
	DeleteDeliveriesBefore(ctx context.Context, before time.Time, limit int) (int64, error)
}
