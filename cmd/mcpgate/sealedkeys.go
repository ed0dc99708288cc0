package main

import (
	"context"
	"fmt"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/seal"
)

// sealedKeys is the store as the OAuth server and the file URL signer see
// it: the signing keys of access tokens and file URLs are sealed at rest
// under the secret key, sealed as they are stored and opened as they are
// read, so that reading the database is not enough to forge either.
type sealedKeys struct {
	mcpgate.Store
	box *seal.Box
}

// CreateOAuthSigningKey stores k with its secret sealed.
func (s sealedKeys) CreateOAuthSigningKey(ctx context.Context, k *mcpgate.OAuthSigningKey) error {
	sealed := *k
	sealed.Secret = []byte(s.box.Seal(k.Secret))
	err := s.Store.CreateOAuthSigningKey(ctx, &sealed)
	k.CreatedAt = sealed.CreatedAt
	return err
}

// ListOAuthSigningKeys returns every signing key, newest first, with its
// secret opened; a key stored in plain form (by a release before keys
// were sealed) is returned as stored.
func (s sealedKeys) ListOAuthSigningKeys(ctx context.Context) ([]*mcpgate.OAuthSigningKey, error) {
	keys, err := s.Store.ListOAuthSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if !sealedSecret(k.Secret) {
			continue
		}
		if k.Secret, err = s.box.Open(string(k.Secret)); err != nil {
			return nil, fmt.Errorf("open signing key %s: %w", k.ID, err)
		}
	}
	return keys, nil
}

// sealPlain seals the keys stored in plain form, once, at start.
func (s sealedKeys) sealPlain(ctx context.Context) error {
	keys, err := s.Store.ListOAuthSigningKeys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if sealedSecret(k.Secret) {
			continue
		}
		k.Secret = []byte(s.box.Seal(k.Secret))
		if err := s.Store.UpdateOAuthSigningKey(ctx, k); err != nil {
			return fmt.Errorf("seal signing key %s: %w", k.ID, err)
		}
	}
	return nil
}

// sealedSecret reports whether a stored secret is sealed. The gateway's
// keys are seal.KeySize random bytes, and a sealed one is longer text in
// Seal's form, so the two are never confused.
func sealedSecret(secret []byte) bool {
	return len(secret) > seal.KeySize && seal.Sealed(string(secret))
}
