package oauth

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// VerifyAccessToken returns the credential of an access token presented
// with r. The token must be one this server signed, unexpired, for the
// resource r addresses (the agent's MCP URL, or the base URL for a token
// of every agent granted) and of a token family not revoked. Returns
// EUNAUTHORIZED otherwise, and EFORBIDDEN when its scope does not allow
// calling tools.
func (s *Server) VerifyAccessToken(r *http.Request, token string) (*mcpgate.Credential, error) {
	c, err := s.verified.claims(token, s.opts.Now(), func() (*accessClaims, error) {
		return s.parseAccessToken(r.Context(), token, false)
	})
	if err != nil {
		return nil, err
	}
	want := s.requestResource(r.URL.EscapedPath())
	if want == "" {
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "OAuth access tokens are accepted only at /{agentId}/mcp; use an API key here")
	}
	if len(c.Audience) != 1 || (c.Audience[0] != want && c.Audience[0] != s.base) {
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the access token was issued for another resource, not %s", want)
	}
	if !slices.Contains(strings.Fields(c.Scope), Scope) {
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "the access token lacks the %q scope", Scope)
	}
	if err := s.families.check(r.Context(), c.Family); err != nil {
		return nil, err
	}
	return &mcpgate.Credential{Kind: mcpgate.CredentialOAuth, ID: c.Grant, UserID: c.Subject, Agents: c.Agents}, nil
}

// familyCache remembers whether token families are revoked for a short
// while, so that verifying a token reads the store at most once per family
// per TTL: a revocation made by another replica takes effect within it, one
// made here (replay, /oauth/revoke) at once.
type familyCache struct {
	store interface {
		FindOAuthFamily(ctx context.Context, id string) (*mcpgate.OAuthFamily, error)
	}
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]familyEntry
}

// familyEntry is one family's state as last read.
type familyEntry struct {
	revoked bool
	fetched time.Time
}

func newFamilyCache(store Store, ttl time.Duration, now func() time.Time) *familyCache {
	return &familyCache{store: store, ttl: ttl, now: now, entries: map[string]familyEntry{}}
}

// check returns EUNAUTHORIZED when the family is revoked or unknown.
func (f *familyCache) check(ctx context.Context, id string) error {
	now := f.now()
	f.mu.Lock()
	e, ok := f.entries[id]
	f.mu.Unlock()
	if !ok || now.Sub(e.fetched) > f.ttl {
		fam, err := f.store.FindOAuthFamily(ctx, id)
		switch {
		case mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND:
			e = familyEntry{revoked: true, fetched: now}
		case err != nil:
			return err
		default:
			e = familyEntry{revoked: fam.RevokedAt != nil, fetched: now}
		}
		f.put(id, e)
	}
	if e.revoked {
		return mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the access token was revoked; sign in again")
	}
	return nil
}

// revoked records a revocation made in this process.
func (f *familyCache) revoked(id string) {
	f.put(id, familyEntry{revoked: true, fetched: f.now()})
}

// put stores an entry, bounding the cache's size.
func (f *familyCache) put(id string, e familyEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.entries) > 100_000 {
		clear(f.entries)
	}
	f.entries[id] = e
}

// tokenCache keeps the claims of access tokens verified recently: decoding
// a token's JSON costs about 30 µs, most of a verification. An entry lasts
// until its token expires; at most 10,000 are kept.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]*accessClaims
}

// claims returns the cached claims of token, or those verify returns,
// caching them. An expired token is looked at afresh, so that verify says
// why it is refused.
func (c *tokenCache) claims(token string, now time.Time, verify func() (*accessClaims, error)) (*accessClaims, error) {
	c.mu.Lock()
	cl, ok := c.entries[token]
	c.mu.Unlock()
	if ok && now.Before(cl.ExpiresAt.Time) {
		return cl, nil
	}
	cl, err := verify()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= 10_000 {
		c.entries = map[string]*accessClaims{}
	}
	c.entries[token] = cl
	return cl, nil
}
