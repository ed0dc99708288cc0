package api

import (
	"context"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// Webhooks manages webhook subscriptions (webhook.Service): it checks
// them against the SSRF guard, seals their secrets and redelivers.
type Webhooks interface {
	// Create returns the stored webhook and its secret in clear (made
	// when secret is ""); EINVALID names the field at fault.
	Create(ctx context.Context, userID, url string, events []string, secret string) (*mcpgate.Webhook, string, error)
	Find(ctx context.Context, id string) (*mcpgate.Webhook, error)
	List(ctx context.Context, userID string) ([]*mcpgate.Webhook, error)
	Delete(ctx context.Context, id string) error
	Deliveries(ctx context.Context, webhookID string, limit int) ([]*mcpgate.WebhookDelivery, error)
	Redeliver(ctx context.Context, webhookID, deliveryID string) (*mcpgate.WebhookDelivery, error)
}

// webhookCreate is the body of POST /api/v1/webhooks.
type webhookCreate struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// Secret signs the deliveries; made and shown once when absent.
	Secret string `json:"secret,omitempty"`
}

// webhookCreated is a new webhook with its secret, shown this once.
type webhookCreated struct {
	*mcpgate.Webhook
	Secret string `json:"secret"`
}

// handleWebhookCreate subscribes the caller's user to events of the
// agents it owns.
func (s *Server) handleWebhookCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.webhooksFor(c); err != nil {
		return err
	}
	var in webhookCreate
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	hook, secret, err := s.opts.Webhooks.Create(r.Context(), c.user.ID, in.URL, in.Events, in.Secret)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, &webhookCreated{Webhook: hook, Secret: secret})
	return nil
}

// handleWebhookList lists the caller's webhooks; an admin's are all.
func (s *Server) handleWebhookList(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.webhooksFor(c); err != nil {
		return err
	}
	owner := c.user.ID
	if c.isAdmin() {
		owner = ""
	}
	list, err := s.opts.Webhooks.List(r.Context(), owner)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": list})
	return nil
}

// handleWebhookGet returns one webhook (never its secret).
func (s *Server) handleWebhookGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	hook, err := s.findWebhook(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, hook)
	return nil
}

// handleWebhookDelete deletes a webhook and its deliveries.
func (s *Server) handleWebhookDelete(w http.ResponseWriter, r *http.Request, c *caller) error {
	hook, err := s.findWebhook(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.opts.Webhooks.Delete(r.Context(), hook.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleDeliveryList lists a webhook's deliveries, newest first, each with
// its attempts; ?limit narrows it.
func (s *Server) handleDeliveryList(w http.ResponseWriter, r *http.Request, c *caller) error {
	hook, err := s.findWebhook(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	limit, err := queryLimit(r.URL.Query().Get("limit"))
	if err != nil {
		return err
	}
	list, err := s.opts.Webhooks.Deliveries(r.Context(), hook.ID, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": list})
	return nil
}

// handleRedeliver queues a delivery's event again, as a new delivery.
func (s *Server) handleRedeliver(w http.ResponseWriter, r *http.Request, c *caller) error {
	hook, err := s.findWebhook(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	d, err := s.opts.Webhooks.Redeliver(r.Context(), hook.ID, r.PathValue("delivery"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, d)
	return nil
}

// webhooksFor refuses agent keys, and answers 503 when the gateway has no
// webhooks.
func (s *Server) webhooksFor(c *caller) error {
	if s.opts.Webhooks == nil {
		return mcpgate.Errorf(mcpgate.EUNAVAILABLE, "this gateway has no webhooks")
	}
	return c.canWrite()
}

// findWebhook returns the webhook id if c may manage it: its owner or an
// admin; 404 otherwise, without saying whether it exists.
func (s *Server) findWebhook(ctx context.Context, c *caller, id string) (*mcpgate.Webhook, error) {
	if err := s.webhooksFor(c); err != nil {
		return nil, err
	}
	hook, err := s.opts.Webhooks.Find(ctx, id)
	if err != nil {
		return nil, err
	}
	if !c.isAdmin() && hook.UserID != c.user.ID {
		return nil, notFound("webhook", id)
	}
	return hook, nil
}
