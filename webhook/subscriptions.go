package webhook

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Lister lists every webhook (userID "" lists all users').
type Lister interface {
	ListWebhooks(ctx context.Context, userID string) ([]*mcpgate.Webhook, error)
}

// DefaultRefreshEvery is how often the outbox reloads which users'
// webhooks want which events, besides after every change it hears of.
const DefaultRefreshEvery = 30 * time.Second

// subscriptions is a snapshot of the event types each user's webhooks
// want, so that the outbox skips the database for the events nobody
// subscribed to (most calls' events, on most gateways). Until the first
// load, and after a failed one, every event is wanted.
type subscriptions struct {
	mu   sync.Mutex // serializes loads, so an older one never overwrites a newer
	snap atomic.Pointer[map[string]map[string]bool]
}

// wants reports whether some webhook of user may want events of type t.
func (s *subscriptions) wants(user, t string) bool {
	snap := s.snap.Load()
	if snap == nil || user == "" {
		return true // not loaded yet, or the owner is found later
	}
	return (*snap)[user][t]
}

// load reloads the snapshot from the store.
func (s *subscriptions) load(ctx context.Context, l Lister) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hooks, err := l.ListWebhooks(ctx, "")
	if err != nil {
		s.snap.Store(nil)
		return err
	}
	snap := map[string]map[string]bool{}
	for _, w := range hooks {
		if snap[w.UserID] == nil {
			snap[w.UserID] = map[string]bool{}
		}
		for _, t := range w.Events {
			snap[w.UserID][t] = true
		}
	}
	s.snap.Store(&snap)
	return nil
}
