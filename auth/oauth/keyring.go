package oauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// keyring holds the signing keys. The newest signs; all verify. Sealing
// them at rest is the store's business: serve hands the server a store
// that seals them under the secret key.
type keyring struct {
	store mcpgate.OAuthStore
	now   func() time.Time

	mu       sync.RWMutex
	keys     []*mcpgate.OAuthSigningKey // newest first
	reloaded time.Time
}

// load reads the keys, making the first one when there is none.
func (k *keyring) load(ctx context.Context) error {
	keys, err := k.store.ListOAuthSigningKeys(ctx)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return k.rotate(ctx)
	}
	k.set(keys)
	return nil
}

// rotate stores a new random 256-bit key and reloads.
func (k *keyring) rotate(ctx context.Context) error {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("make signing key: %w", err)
	}
	if err := k.store.CreateOAuthSigningKey(ctx, &mcpgate.OAuthSigningKey{ID: mcpgate.NewID("sk_"), Secret: secret}); err != nil {
		return err
	}
	keys, err := k.store.ListOAuthSigningKeys(ctx)
	if err != nil {
		return err
	}
	k.set(keys)
	return nil
}

// set replaces the keys.
func (k *keyring) set(keys []*mcpgate.OAuthSigningKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys, k.reloaded = keys, k.now()
}

// signing returns the key that signs.
func (k *keyring) signing() *mcpgate.OAuthSigningKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys[0]
}

// all returns every key, newest first.
func (k *keyring) all() []*mcpgate.OAuthSigningKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys
}

// find returns the key with the given ID, reloading the keys (at most once
// a second) when it is unknown, as after a rotation by another replica.
func (k *keyring) find(ctx context.Context, id string) (*mcpgate.OAuthSigningKey, bool) {
	if key := k.lookup(id); key != nil {
		return key, true
	}
	k.mu.RLock()
	recent := k.now().Sub(k.reloaded) < time.Second
	k.mu.RUnlock()
	if recent {
		return nil, false
	}
	if keys, err := k.store.ListOAuthSigningKeys(ctx); err == nil && len(keys) > 0 {
		k.set(keys)
	}
	key := k.lookup(id)
	return key, key != nil
}

// lookup returns the loaded key with the given ID, or nil.
func (k *keyring) lookup(id string) *mcpgate.OAuthSigningKey {
	for _, key := range k.all() {
		if key.ID == id {
			return key
		}
	}
	return nil
}
