package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// fakeKeys is an in-memory Keys store that counts lookups and records
// touches.
type fakeKeys struct {
	mu       sync.Mutex
	byHash   map[string]*mcpgate.APIKey
	finds    int
	touches  []time.Time
	findErr  error
	touchErr error
}

func (s *fakeKeys) FindKeyByHash(_ context.Context, hash string) (*mcpgate.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finds++
	if s.findErr != nil {
		return nil, s.findErr
	}
	k, ok := s.byHash[hash]
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no key")
	}
	c := *k
	return &c, nil
}

func (s *fakeKeys) TouchKey(_ context.Context, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touches = append(s.touches, at)
	return s.touchErr
}

// add stores a new key and returns its secret.
func (s *fakeKeys) add(kind mcpgate.KeyKind, userID, agentID string) (*mcpgate.APIKey, string) {
	k, secret := NewKey(kind, userID, agentID, "")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byHash == nil {
		s.byHash = map[string]*mcpgate.APIKey{}
	}
	s.byHash[k.Hash] = k
	return k, secret
}

// revoke marks the key with the given secret revoked.
func (s *fakeKeys) revoke(secret string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byHash[HashSecret(secret)].RevokedAt = &at
}

// findCount returns how many lookups reached the store.
func (s *fakeKeys) findCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finds
}

// touchTimes returns the times keys were touched at.
func (s *fakeKeys) touchTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.touches...)
}

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestAuthenticateHeaders(t *testing.T) {
	keys := &fakeKeys{}
	user, userSecret := keys.add(mcpgate.KeyUser, "u1", "")
	agent, agentSecret := keys.add(mcpgate.KeyAgent, "u1", "a1")
	_, otherAgentSecret := keys.add(mcpgate.KeyAgent, "u2", "a2")
	_, revokedSecret := keys.add(mcpgate.KeyUser, "u1", "")
	keys.revoke(revokedSecret, time.Now())
	_, unknownSecret := NewKey(mcpgate.KeyUser, "u1", "", "")
	userCred := &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: user.ID, UserID: "u1"}
	agentCred := &mcpgate.Credential{Kind: mcpgate.CredentialAgentKey, ID: agent.ID, UserID: "u1", AgentID: "a1"}

	tests := []struct {
		name          string
		authorization string
		agentKey      string
		want          *mcpgate.Credential
		errHas        string
	}{
		{"nothing", "", "", nil, "authentication required: send Authorization: Bearer <token or API key>, or X-Agent-API-Key"},
		{"user key", "Bearer " + userSecret, "", userCred, ""},
		{"agent key as bearer", "Bearer " + agentSecret, "", agentCred, ""},
		{"scheme in any case, extra spaces", "  bearer   " + agentSecret + "  ", "", agentCred, ""},
		{"agent key header", "", agentSecret, agentCred, ""},
		{"agent key header with spaces", "", " " + agentSecret + " ", agentCred, ""},
		{"same agent key in both", "Bearer " + agentSecret, agentSecret, agentCred, ""},
		{"user key and agent key", "Bearer " + userSecret, agentSecret, nil, "the request carries two different credentials; send exactly one"},
		{"two agent keys", "Bearer " + agentSecret, otherAgentSecret, nil, "two different credentials"},
		{"user key in agent key header", "", userSecret, nil, "X-Agent-API-Key must hold an agent API key (bak_…)"},
		{"user key in both", "Bearer " + userSecret, userSecret, nil, "X-Agent-API-Key must hold an agent API key"},
		{"junk in agent key header", "", "hello", nil, "X-Agent-API-Key must hold an agent API key"},
		{"basic auth", "Basic dTpw", "", nil, `the Authorization header must be "Bearer <credential>"`},
		{"bearer without token", "Bearer", "", nil, `must be "Bearer <credential>"`},
		{"bearer with blank token", "Bearer    ", "", nil, `must be "Bearer <credential>"`},
		{"bad authorization beside a good header", "Token x", agentSecret, nil, `must be "Bearer <credential>"`},
		{"not an API key", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "", nil, "the bearer credential is not a recognized API key (oag_… or bak_…)"},
		{"unknown key", "Bearer " + unknownSecret, "", nil, "unknown API key"},
		{"prefix only", "Bearer oag_", "", nil, "unknown API key"},
		{"revoked key", "Bearer " + revokedSecret, "", nil, "this API key was revoked; create a new one with: mcpgate key create"},
	}
	a := NewAuthenticator(keys, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.Authenticate(newRequest(tt.authorization, tt.agentKey))
			if tt.errHas != "" {
				mustUnauthorized(t, err, tt.errHas)
				return
			}
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("credential (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuthenticateStoreFailure(t *testing.T) {
	down := errors.New("database is down")
	keys := &fakeKeys{findErr: down}
	_, secret := keys.add(mcpgate.KeyUser, "u1", "")
	_, err := NewAuthenticator(keys, nil).Authenticate(newRequest("Bearer "+secret, ""))
	if !errors.Is(err, down) || mcpgate.ErrorCode(err) != mcpgate.EINTERNAL {
		t.Errorf("Authenticate = %v, want the store's error, internal", err)
	}
}

// TestAuthenticateChecksHash guards against a store whose lookup by hash
// returns another key.
func TestAuthenticateMalformedKeyNeverReachesStore(t *testing.T) {
	keys := &fakeKeys{}
	a := NewAuthenticator(keys, nil)
	for _, secret := range []string{"oag_short", "bak_" + strings.Repeat("!", secretLen), "oag_" + strings.Repeat("a", secretLen+1)} {
		_, err := a.Authenticate(newRequest("Bearer "+secret, ""))
		mustUnauthorized(t, err, "unknown API key")
	}
	if n := keys.findCount(); n != 0 {
		t.Errorf("store lookups = %d, want 0", n)
	}
}

func TestAuthenticateRepeatedHeaders(t *testing.T) {
	_, first := NewKey(mcpgate.KeyUser, "u1", "", "")
	_, second := NewKey(mcpgate.KeyUser, "u1", "", "")
	for _, header := range []string{"Authorization", HeaderAgentKey} {
		r := newRequest("", "")
		prefix := "Bearer "
		if header == HeaderAgentKey {
			prefix = ""
			_, first = NewKey(mcpgate.KeyAgent, "u1", "a1", "")
		}
		r.Header.Add(header, prefix+first)
		r.Header.Add(header, prefix+second)
		_, err := NewAuthenticator(&fakeKeys{}, nil).Authenticate(r)
		mustUnauthorized(t, err, "the request repeats a credential header; send exactly one credential")
	}
}

func TestAuthenticateUnknownKeyNotCached(t *testing.T) {
	keys := &fakeKeys{}
	clock := newFakeClock()
	a := NewAuthenticator(keys, &Options{Now: clock.Now})
	k, secret := NewKey(mcpgate.KeyUser, "u1", "", "")
	_, err := a.Authenticate(newRequest("Bearer "+secret, ""))
	mustUnauthorized(t, err, "unknown API key")

	// The key is created by another process right after the failure.
	keys.mu.Lock()
	keys.byHash = map[string]*mcpgate.APIKey{k.Hash: k}
	keys.mu.Unlock()
	mustAuthenticate(t, a, secret)
	if n := keys.findCount(); n != 2 {
		t.Errorf("store lookups = %d, want 2", n)
	}
}

func TestAuthenticateCache(t *testing.T) {
	keys := &fakeKeys{}
	clock := newFakeClock()
	a := NewAuthenticator(keys, &Options{CacheTTL: 10 * time.Second, Now: clock.Now})
	_, secret := keys.add(mcpgate.KeyAgent, "u1", "a1")
	steps := []struct {
		advance time.Duration
		finds   int
	}{
		{0, 1},
		{0, 1},
		{9 * time.Second, 1},
		{time.Second, 1}, // exactly the TTL: still trusted
		{time.Nanosecond, 2},
		{5 * time.Second, 2},
		{6 * time.Second, 3},
	}
	for i, s := range steps {
		clock.Add(s.advance)
		mustAuthenticate(t, a, secret)
		if n := keys.findCount(); n != s.finds {
			t.Fatalf("step %d: store lookups = %d, want %d", i, n, s.finds)
		}
	}
}

func TestAuthenticateRevocation(t *testing.T) {
	keys := &fakeKeys{}
	clock := newFakeClock()
	a := NewAuthenticator(keys, &Options{Now: clock.Now}) // default TTL 2s
	_, secret := keys.add(mcpgate.KeyUser, "u1", "")
	mustAuthenticate(t, a, secret)

	keys.revoke(secret, clock.Now())
	clock.Add(2 * time.Second)
	mustAuthenticate(t, a, secret) // cached: another process's revocation is not seen yet
	clock.Add(time.Millisecond)
	_, err := a.Authenticate(newRequest("Bearer "+secret, ""))
	mustUnauthorized(t, err, "revoked")
}

// TestAuthenticateExpiry checks that a key works until its expiry, also
// from the cache, and is refused from then on with a message saying it
// expired.
func TestAuthenticateExpiry(t *testing.T) {
	keys := &fakeKeys{}
	clock := newFakeClock()
	a := NewAuthenticator(keys, &Options{CacheTTL: time.Hour, Now: clock.Now})
	k, secret := keys.add(mcpgate.KeyUser, "u1", "")
	at := clock.Now().Add(time.Minute)
	keys.mu.Lock()
	k.ExpiresAt = &at
	keys.mu.Unlock()
	mustAuthenticate(t, a, secret)
	clock.Add(time.Minute - time.Millisecond)
	mustAuthenticate(t, a, secret)
	clock.Add(time.Millisecond)
	_, err := a.Authenticate(newRequest("Bearer "+secret, ""))
	mustUnauthorized(t, err, "this API key expired at 2025-06-01T12:01:00Z")
	if n := keys.findCount(); n != 1 {
		t.Errorf("store lookups = %d, want 1: the cached key's expiry is checked against the clock", n)
	}
}

func TestForget(t *testing.T) {
	keys := &fakeKeys{}
	clock := newFakeClock()
	a := NewAuthenticator(keys, &Options{CacheTTL: time.Hour, Now: clock.Now})
	_, secret := keys.add(mcpgate.KeyAgent, "u1", "a1")
	_, other := keys.add(mcpgate.KeyAgent, "u1", "a1")
	mustAuthenticate(t, a, secret)
	mustAuthenticate(t, a, other)

	keys.revoke(secret, clock.Now())
	a.Forget(HashSecret(secret))
	_, err := a.Authenticate(newRequest("", secret))
	mustUnauthorized(t, err, "revoked")
	mustAuthenticate(t, a, other)
	if n := keys.findCount(); n != 3 {
		t.Errorf("store lookups = %d, want 3 (Forget dropped only one key)", n)
	}
	a.Forget(HashSecret("bak_never-seen")) // forgetting an unknown key is harmless
}

func TestTouch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys := &fakeKeys{}
		clock := newFakeClock()
		t0 := clock.Now()
		a := NewAuthenticator(keys, &Options{CacheTTL: 2 * time.Second, TouchEvery: time.Minute, Now: clock.Now})
		_, secret := keys.add(mcpgate.KeyUser, "u1", "")

		mustAuthenticate(t, a, secret)
		synctest.Wait()
		if diff := cmp.Diff([]time.Time{t0}, keys.touchTimes()); diff != "" {
			t.Fatalf("first use (-want +got):\n%s", diff)
		}
		// Uses within the minute, across several cache refreshes, write
		// nothing more.
		for range 59 {
			clock.Add(time.Second)
			mustAuthenticate(t, a, secret)
		}
		synctest.Wait()
		if n := len(keys.touchTimes()); n != 1 {
			t.Fatalf("touches within TouchEvery = %d, want 1", n)
		}
		clock.Add(time.Second)
		mustAuthenticate(t, a, secret)
		mustAuthenticate(t, a, secret)
		synctest.Wait()
		if diff := cmp.Diff([]time.Time{t0, t0.Add(time.Minute)}, keys.touchTimes()); diff != "" {
			t.Errorf("after TouchEvery (-want +got):\n%s", diff)
		}
	})
}

func TestTouchFailureIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		keys := &fakeKeys{touchErr: errors.New("disk full")}
		a := NewAuthenticator(keys, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		k, secret := keys.add(mcpgate.KeyUser, "u1", "")
		mustAuthenticate(t, a, secret)
		synctest.Wait()
		for _, want := range []string{"record key use", "key=" + k.ID, "disk full"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log %q lacks %q", logs.String(), want)
			}
		}
	})
}

// TestAuthenticateConcurrent runs lookups that refresh the cache and touch
// keys at once, for the race detector. Its store takes no lock, so that only
// the authenticator's own locking orders its memory accesses.
func TestAuthenticateConcurrent(t *testing.T) {
	k, secret := NewKey(mcpgate.KeyAgent, "u1", "a1", "")
	keys := readOnlyKeys{k.Hash: k}
	a := NewAuthenticator(keys, &Options{CacheTTL: -1, TouchEvery: time.Nanosecond})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if _, err := a.Authenticate(newRequest("", secret)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// readOnlyKeys is a Keys store that never changes and records nothing.
type readOnlyKeys map[string]*mcpgate.APIKey

func (s readOnlyKeys) FindKeyByHash(_ context.Context, hash string) (*mcpgate.APIKey, error) {
	if k, ok := s[hash]; ok {
		return k, nil
	}
	return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no key")
}

func (readOnlyKeys) TouchKey(context.Context, string, time.Time) error { return nil }

// newRequest returns a request with the given credential headers.
func newRequest(authorization, agentKey string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/a1/mcp", nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	if agentKey != "" {
		r.Header.Set(HeaderAgentKey, agentKey)
	}
	return r
}

// mustAuthenticate authenticates an agent key header or bearer secret.
func mustAuthenticate(tb testing.TB, a *Authenticator, secret string) *mcpgate.Credential {
	tb.Helper()
	c, err := a.Authenticate(newRequest("Bearer "+secret, ""))
	if err != nil {
		tb.Fatalf("Authenticate: %v", err)
	}
	return c
}

// mustUnauthorized checks for EUNAUTHORIZED with a message holding want.
func mustUnauthorized(tb testing.TB, err error, want string) {
	tb.Helper()
	if code := mcpgate.ErrorCode(err); code != mcpgate.EUNAUTHORIZED {
		tb.Fatalf("code = %q, want %q (err %v)", code, mcpgate.EUNAUTHORIZED, err)
	}
	if msg := mcpgate.ErrorMessage(err); !strings.Contains(msg, want) {
		tb.Errorf("message = %q, want it to contain %q", msg, want)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// heldKeys is a Keys store whose TouchKey waits for release.
type heldKeys struct {
	fakeKeys
	entered, release chan struct{}
}

func (s *heldKeys) TouchKey(ctx context.Context, id string, at time.Time) error {
	close(s.entered)
	<-s.release
	return s.fakeKeys.TouchKey(ctx, id, at)
}

// TestCloseWaitsForTouches: Close returns only once the record of a key's
// use being written has been, so that the caller may close the store
// after it; and a key used after Close is no longer recorded.
func TestCloseWaitsForTouches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys := &heldKeys{entered: make(chan struct{}), release: make(chan struct{})}
		a := NewAuthenticator(keys, &Options{TouchEvery: time.Nanosecond})
		_, secret := keys.add(mcpgate.KeyUser, "u1", "")
		mustAuthenticate(t, a, secret)
		<-keys.entered
		closed := false
		go func() {
			_ = a.Close()
			closed = true
		}()
		synctest.Wait()
		if closed {
			t.Fatal("Close returned while a key's use was being written")
		}
		close(keys.release)
		synctest.Wait()
		if !closed {
			t.Fatal("Close did not return once the write ended")
		}
		time.Sleep(time.Second)
		mustAuthenticate(t, a, secret) // a second touch would close entered again: a panic
		synctest.Wait()
		if n := len(keys.touchTimes()); n != 1 {
			t.Errorf("touches = %d, want 1 (none after Close)", n)
		}
	})
}
