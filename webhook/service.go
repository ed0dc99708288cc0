package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
)

// Store keeps webhooks and reads their deliveries (mcpgate.WebhookStore).
type Store interface {
	CreateWebhook(ctx context.Context, w *mcpgate.Webhook) error
	FindWebhook(ctx context.Context, id string) (*mcpgate.Webhook, error)
	ListWebhooks(ctx context.Context, userID string) ([]*mcpgate.Webhook, error)
	DeleteWebhook(ctx context.Context, id string) error
	ListDeliveries(ctx context.Context, webhookID string, limit int) ([]*mcpgate.WebhookDelivery, error)
	Redeliver(ctx context.Context, webhookID, id string, now, giveUpAt time.Time) (*mcpgate.WebhookDelivery, error)
}

// Sealer encrypts secrets at rest (seal.Box).
type Sealer interface {
	Seal(plain []byte) string
	Open(sealed string) ([]byte, error)
}

// DefaultRetryFor is how long a delivery is retried before it fails.
const DefaultRetryFor = 24 * time.Hour

// ServiceOptions configure a Service. Store and Sealer are required.
type ServiceOptions struct {
	Store  Store
	Sealer Sealer
	// Policy is the SSRF guard's policy webhook URLs must pass.
	Policy netguard.Policy
	// Resolve looks a host's addresses up; default net.DefaultResolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// RetryFor bounds a redelivery's retries; default DefaultRetryFor.
	RetryFor time.Duration
	// Wake is told when a redelivery is due; optional.
	Wake func()
	// Changed is told after a webhook was made or deleted (the outbox
	// reloads what it delivers, here and on other replicas); optional.
	Changed func(ctx context.Context)
}

// Service manages webhooks: it checks them, makes and seals their
// secrets, and redelivers.
type Service struct {
	opts ServiceOptions
}

// NewService returns a Service.
func NewService(opts *ServiceOptions) *Service {
	s := &Service{opts: *opts}
	if s.opts.Resolve == nil {
		s.opts.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if s.opts.RetryFor <= 0 {
		s.opts.RetryFor = DefaultRetryFor
	}
	if s.opts.Wake == nil {
		s.opts.Wake = func() {}
	}
	if s.opts.Changed == nil {
		s.opts.Changed = func(context.Context) {}
	}
	return s
}

// Create stores a webhook of userID after checking it, and returns it with
// its secret in clear: the one given, or a new one when secret is "".
// Returns EINVALID naming the field at fault.
func (s *Service) Create(ctx context.Context, userID, rawURL string, events []string, secret string) (*mcpgate.Webhook, string, error) {
	if err := s.CheckURL(ctx, rawURL); err != nil {
		return nil, "", err
	}
	events, err := checkEvents(events)
	if err != nil {
		return nil, "", err
	}
	if secret == "" {
		secret = NewSecret()
	} else if len(secret) < 16 || len(secret) > 256 {
		return nil, "", mcpgate.Errorf(mcpgate.EINVALID, "secret must be 16 to 256 characters (or absent, to have one made)")
	}
	w := &mcpgate.Webhook{UserID: userID, URL: rawURL, Events: events, SealedSecret: s.opts.Sealer.Seal([]byte(secret))}
	if err := s.opts.Store.CreateWebhook(ctx, w); err != nil {
		return nil, "", err
	}
	s.opts.Changed(ctx)
	return w, secret, nil
}

// NewSecret returns a new random signing secret, "whsec_" and 43
// characters.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b)
}

// CheckURL returns EINVALID unless rawURL is an http(s) URL whose host
// passes the SSRF guard's policy now: a literal address, or every address
// the name resolves to. Deliveries check again when they dial.
func (s *Service) CheckURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err == nil {
		err = s.opts.Policy.Check(u)
	}
	if err != nil {
		return mcpgate.Errorf(mcpgate.EINVALID, "url: %v", err)
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		return nil
	}
	addrs, err := s.opts.Resolve(ctx, u.Hostname())
	if err != nil || len(addrs) == 0 {
		return mcpgate.Errorf(mcpgate.EINVALID, "url: host %q does not resolve", u.Hostname())
	}
	for _, a := range addrs {
		if err := s.opts.Policy.CheckAddr(a.Unmap()); err != nil {
			return mcpgate.Errorf(mcpgate.EINVALID, "url: %v", err)
		}
	}
	return nil
}

// checkEvents returns the event types without repeats, or EINVALID for
// none or an unknown one.
func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "events: name at least one of %v", mcpgate.EventTypes())
	}
	var out []string
	for _, e := range events {
		if !slices.Contains(mcpgate.EventTypes(), e) {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "events: unknown event %q; known: %v", e, mcpgate.EventTypes())
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Find returns a webhook; ENOTFOUND if unknown.
func (s *Service) Find(ctx context.Context, id string) (*mcpgate.Webhook, error) {
	return s.opts.Store.FindWebhook(ctx, id)
}

// List returns a user's webhooks, or everyone's for userID "".
func (s *Service) List(ctx context.Context, userID string) ([]*mcpgate.Webhook, error) {
	return s.opts.Store.ListWebhooks(ctx, userID)
}

// Delete deletes a webhook and its deliveries.
func (s *Service) Delete(ctx context.Context, id string) error {
	if err := s.opts.Store.DeleteWebhook(ctx, id); err != nil {
		return err
	}
	s.opts.Changed(ctx)
	return nil
}

// Deliveries returns a webhook's deliveries, newest first, with their
// attempts.
func (s *Service) Deliveries(ctx context.Context, webhookID string, limit int) ([]*mcpgate.WebhookDelivery, error) {
	return s.opts.Store.ListDeliveries(ctx, webhookID, limit)
}

// Redeliver queues the event of one of the webhook's deliveries again, as
// a new delivery due now.
func (s *Service) Redeliver(ctx context.Context, webhookID, deliveryID string) (*mcpgate.WebhookDelivery, error) {
	now := time.Now()
	d, err := s.opts.Store.Redeliver(ctx, webhookID, deliveryID, now, now.Add(s.opts.RetryFor))
	if err != nil {
		return nil, err
	}
	s.opts.Wake()
	return d, nil
}
