package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
)

// HeaderAgentKey is the header that may carry an agent key instead of
// Authorization.
const HeaderAgentKey = "X-Agent-API-Key"

// agentKeyField is HeaderAgentKey as net/http keys it (canonical form), so
// that reading it does not canonicalize the name on every request.
const agentKeyField = "X-Agent-Api-Key"

// Keys is what the authenticator needs of the key store.
type Keys interface {
	FindKeyByHash(ctx context.Context, hash string) (*mcpgate.APIKey, error)
	TouchKey(ctx context.Context, id string, at time.Time) error
}

// Tokens verifies OAuth access tokens (package auth/oauth).
type Tokens interface {
	// VerifyAccessToken returns the credential of an access token presented
	// with r: EUNAUTHORIZED when it is invalid, expired, revoked or issued
	// for another resource than the one r addresses, EFORBIDDEN when its
	// scope falls short.
	VerifyAccessToken(r *http.Request, token string) (*mcpgate.Credential, error)
}

// Options configure an Authenticator. The zero value is usable.
type Options struct {
	// Tokens verifies bearer credentials that are not API keys; nil
	// refuses them.
	Tokens Tokens
	// CacheTTL is how long a key looked up in the store is trusted before
	// it is looked up again; it bounds how late a revocation made by
	// another process takes effect. Default 2s.
	CacheTTL time.Duration
	// TouchEvery is how often a key's last use is written. Default 1m.
	TouchEvery time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger reports failures to record a key's use; nil discards.
	Logger *slog.Logger
}

// Authenticator turns request headers into a credential.
type Authenticator struct {
	keys Keys
	opts Options

	// cache maps a keyHash to its *cachedKey. It is read without a lock
	// on every request (a lock taken by every request is a line of memory
	// each core writes in turn); mu orders its writes, and n counts its
	// keys under mu.
	cache sync.Map
	mu    sync.Mutex
	n     int
	// touches are the key-use writes in flight, which Close waits for;
	// closed, under mu, stops new ones.
	touches sync.WaitGroup
	closed  bool
}

// keyHash is the SHA-256 of a key's secret, what the cache is keyed by:
// its hex form (HashSecret), what the store is keyed by, is made only when
// the store is asked.
type keyHash [sha256.Size]byte

// hashOf is the keyHash of secret; a secret of the usual length is copied
// on the stack, not into a new slice.
func hashOf(secret string) keyHash {
	var buf [128]byte
	if len(secret) <= len(buf) {
		n := copy(buf[:], secret)
		return sha256.Sum256(buf[:n])
	}
	return sha256.Sum256([]byte(secret))
}

// cachedKey is a key looked up recently.
type cachedKey struct {
	key     *mcpgate.APIKey
	fetched time.Time
	// touched is when the key's use was last recorded (Unix nanoseconds,
	// 0 for never): read without a lock, written under the
	// Authenticator's mu.
	touched atomic.Int64
}

// NewAuthenticator returns an authenticator over keys.
func NewAuthenticator(keys Keys, opts *Options) *Authenticator {
	a := &Authenticator{keys: keys}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.CacheTTL == 0 {
		a.opts.CacheTTL = 2 * time.Second
	}
	if a.opts.TouchEvery == 0 {
		a.opts.TouchEvery = time.Minute
	}
	if a.opts.Now == nil {
		a.opts.Now = time.Now
	}
	if a.opts.Logger == nil {
		a.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return a
}

// Authenticate returns the request's credential. Returns EUNAUTHORIZED
// when there is none, when it is unknown, revoked or expired, and when the request
// carries two different credentials.
func (a *Authenticator) Authenticate(r *http.Request) (*mcpgate.Credential, error) {
	secret, err := presented(r)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasPrefix(secret, mcpgate.UserKeyPrefix), strings.HasPrefix(secret, mcpgate.AgentKeyPrefix):
		return a.apiKey(r.Context(), secret)
	case a.opts.Tokens != nil && strings.Count(secret, ".") == 2:
		return a.opts.Tokens.VerifyAccessToken(r, secret)
	default:
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the bearer credential is not a recognized API key (oag_… or bak_…)")
	}
}

// presented returns the one credential a request carries. The same agent
// key in both headers counts once.
func presented(r *http.Request) (string, error) {
	agentKeys := r.Header[agentKeyField]
	if len(r.Header["Authorization"]) > 1 || len(agentKeys) > 1 {
		return "", mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the request repeats a credential header; send exactly one credential")
	}
	bearer, err := bearerToken(r.Header.Get("Authorization"))
	if err != nil {
		return "", err
	}
	var agentKey string
	if len(agentKeys) == 1 {
		agentKey = strings.TrimSpace(agentKeys[0])
	}
	if agentKey != "" && !strings.HasPrefix(agentKey, mcpgate.AgentKeyPrefix) {
		return "", mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "%s must hold an agent API key (bak_…)", HeaderAgentKey)
	}
	switch {
	case bearer == "" && agentKey == "":
		return "", mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "authentication required: send Authorization: Bearer <token or API key>, or %s", HeaderAgentKey)
	case bearer != "" && agentKey != "" && subtle.ConstantTimeCompare([]byte(bearer), []byte(agentKey)) != 1:
		return "", mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the request carries two different credentials; send exactly one")
	case bearer != "":
		return bearer, nil
	}
	return agentKey, nil
}

// bearerToken extracts the token of an Authorization header, "" when the
// header is absent.
func bearerToken(h string) (string, error) {
	if h == "" {
		return "", nil
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the Authorization header must be \"Bearer <credential>\"")
	}
	return token, nil
}

// apiKey authenticates an API key secret.
func (a *Authenticator) apiKey(ctx context.Context, secret string) (*mcpgate.Credential, error) {
	if !wellFormed(secret) {
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "unknown API key")
	}
	k, err := a.lookup(ctx, hashOf(secret))
	if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil {
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "this API key was revoked; create a new one with: mcpgate key create")
	}
	if k.Expired(a.opts.Now()) {
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "this API key expired at %s; create a new one with: mcpgate key create, or extend it with: mcpgate key set %s --expires-in DURATION",
			k.ExpiresAt.UTC().Format(time.RFC3339), k.ID)
	}
	if k.Kind == mcpgate.KeyAgent {
		return &mcpgate.Credential{Kind: mcpgate.CredentialAgentKey, ID: k.ID, UserID: k.UserID, AgentID: k.AgentID}, nil
	}
	return &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: k.ID, UserID: k.UserID}, nil
}

// lookup finds a key by hash, through the cache, and records its use.
func (a *Authenticator) lookup(ctx context.Context, hash keyHash) (*mcpgate.APIKey, error) {
	now := a.opts.Now()
	var c *cachedKey
	if v, ok := a.cache.Load(hash); ok {
		c = v.(*cachedKey)
	}
	if c == nil || now.Sub(c.fetched) > a.opts.CacheTTL {
		k, err := a.keys.FindKeyByHash(ctx, hex.EncodeToString(hash[:]))
		if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
			return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "unknown API key")
		} else if err != nil {
			return nil, err
		}
		c = a.store(hash, k, now, c)
	}
	a.touch(c, now)
	return c.key, nil
}

// store caches a fresh lookup, keeping when the key was last touched.
func (a *Authenticator) store(hash keyHash, k *mcpgate.APIKey, now time.Time, old *cachedKey) *cachedKey {
	c := &cachedKey{key: k, fetched: now}
	a.mu.Lock()
	defer a.mu.Unlock()
	if old != nil {
		c.touched.Store(old.touched.Load()) // touch writes it under a.mu
	}
	if a.n > 100_000 {
		a.cache.Clear() // bounded memory against floods of distinct keys
		a.n = 0
	}
	if _, had := a.cache.Swap(hash, c); !had {
		a.n++
	}
	return c
}

// touch records the key's use in the background, at most once per
// TouchEvery, so that the hot path never waits for a write.
func (a *Authenticator) touch(c *cachedKey, now time.Time) {
	if !a.touchDue(c, now) {
		return // the common case, without the lock
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || !a.touchDue(c, now) {
		return
	}
	c.touched.Store(now.UnixNano())
	id := c.key.ID
	a.touches.Go(func() { // under mu, so that no write starts once Close waits
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.keys.TouchKey(ctx, id, now); err != nil {
			a.opts.Logger.Warn("record key use", "key", id, "err", err)
		}
	})
}

// touchDue reports whether the key's use was last recorded TouchEvery or
// more before now.
func (a *Authenticator) touchDue(c *cachedKey, now time.Time) bool {
	last := c.touched.Load()
	return last == 0 || now.UnixNano()-last >= int64(a.opts.TouchEvery)
}

// Close waits for the records of key use still being written, so that
// none reaches the store after the caller closes it. Keys still
// authenticate after it, but their use is no longer recorded.
func (a *Authenticator) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.touches.Wait()
	return nil
}

// Forget drops a cached key so that a revocation made in this process takes
// effect at once.
func (a *Authenticator) Forget(hash string) {
	var h keyHash
	if n, err := hex.Decode(h[:], []byte(hash)); err != nil || n != len(h) {
		return // not a hash of ours: nothing cached under it
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, had := a.cache.LoadAndDelete(h); had {
		a.n--
	}
}
