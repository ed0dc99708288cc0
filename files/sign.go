package files

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Operations a token allows.
const (
	OpUpload   = "put"
	OpDownload = "get"
)

// Token is a parsed presigned-URL token: "op.fileID.expiry.keyID.mac",
// expiry in Unix seconds and mac the hex HMAC-SHA256 of the rest.
type Token struct {
	Op      string
	FileID  string
	Expires time.Time
	KeyID   string
	MAC     []byte
	// signed is the part the MAC covers.
	signed string
}

// ParseToken splits a token into its fields, checking only their form.
func ParseToken(s string) (*Token, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 5 || len(s) > 512 {
		return nil, badToken("it is not five dot-separated fields")
	}
	t := &Token{Op: parts[0], FileID: parts[1], KeyID: parts[3], signed: strings.Join(parts[:4], ".")}
	if t.Op != OpUpload && t.Op != OpDownload {
		return nil, badToken("unknown operation")
	}
	if t.FileID == "" || t.KeyID == "" {
		return nil, badToken("no file or key ID")
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || exp <= 0 {
		return nil, badToken("bad expiry")
	}
	t.Expires = time.Unix(exp, 0).UTC()
	if t.MAC, err = hex.DecodeString(parts[4]); err != nil || len(t.MAC) != sha256.Size {
		return nil, badToken("bad signature")
	}
	return t, nil
}

// badToken is the error of a token that is not well formed.
func badToken(why string) error {
	return mcpgate.Errorf(mcpgate.EFORBIDDEN, "the file URL's token is invalid: %s", why)
}

// KeyStore is where the signing keys are: the OAuth signing keyring
// (mcpgate.OAuthStore).
type KeyStore interface {
	CreateOAuthSigningKey(ctx context.Context, k *mcpgate.OAuthSigningKey) error
	ListOAuthSigningKeys(ctx context.Context) ([]*mcpgate.OAuthSigningKey, error)
}

// Signer signs and checks file URL tokens with keys derived from the
// store's signing keys: the newest signs, any verifies.
type Signer struct {
	keys KeyStore
	now  func() time.Time

	mu     sync.Mutex
	loaded []*mcpgate.OAuthSigningKey
}

// NewSigner returns a Signer over keys; now is the clock (nil: time.Now).
func NewSigner(keys KeyStore, now func() time.Time) *Signer {
	if now == nil {
		now = time.Now
	}
	return &Signer{keys: keys, now: now}
}

// Sign returns a token allowing op on fileID for ttl.
func (s *Signer) Sign(ctx context.Context, op, fileID string, ttl time.Duration) (string, time.Time, error) {
	key, err := s.newest(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	exp := s.now().Add(ttl).Truncate(time.Second).UTC()
	signed := strings.Join([]string{op, fileID, strconv.FormatInt(exp.Unix(), 10), key.ID}, ".")
	return signed + "." + hex.EncodeToString(mac(key.Secret, signed)), exp, nil
}

// Verify checks that raw is a valid, unexpired token for op and returns
// the file ID it is for. Every failure is EFORBIDDEN.
func (s *Signer) Verify(ctx context.Context, raw, op string) (string, error) {
	t, err := s.check(ctx, raw, op)
	if err != nil {
		return "", err
	}
	return t.FileID, nil
}

// check is Verify, returning the whole token.
func (s *Signer) check(ctx context.Context, raw, op string) (*Token, error) {
	t, err := ParseToken(raw)
	if err != nil {
		return nil, err
	}
	if t.Op != op {
		return nil, badToken("it is not for this operation")
	}
	key, err := s.find(ctx, t.KeyID)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(t.MAC, mac(key.Secret, t.signed)) {
		return nil, badToken("bad signature")
	}
	if !s.now().Before(t.Expires) {
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "the file URL expired at %s", t.Expires.Format(time.RFC3339))
	}
	return t, nil
}

// mac is the token MAC: HMAC-SHA256 with a key derived for file URLs from
// the signing key, so that it never signs anything the OAuth server would
// accept.
func mac(secret []byte, signed string) []byte {
	d := hmac.New(sha256.New, secret)
	d.Write([]byte("mcpgate file URL v1"))
	m := hmac.New(sha256.New, d.Sum(nil))
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// newest returns the signing key, making the first when there is none.
func (s *Signer) newest(ctx context.Context) (*mcpgate.OAuthSigningKey, error) {
	keys, err := s.load(ctx, false)
	if err != nil {
		return nil, err
	}
	if len(keys) > 0 {
		return keys[0], nil
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("make signing key: %w", err)
	}
	k := &mcpgate.OAuthSigningKey{ID: mcpgate.NewID("sk_"), Secret: secret}
	if err := s.keys.CreateOAuthSigningKey(ctx, k); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.loaded = nil
	s.mu.Unlock()
	return k, nil
}

// find returns the key with the given ID, reloading once when unknown.
func (s *Signer) find(ctx context.Context, id string) (*mcpgate.OAuthSigningKey, error) {
	for _, reload := range []bool{false, true} {
		keys, err := s.load(ctx, reload)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if k.ID == id {
				return k, nil
			}
		}
	}
	return nil, badToken("unknown key")
}

// load returns the keys, newest first, reading them when not yet read or
// when reload is set.
func (s *Signer) load(ctx context.Context, reload bool) ([]*mcpgate.OAuthSigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.loaded) > 0 && !reload {
		return s.loaded, nil
	}
	keys, err := s.keys.ListOAuthSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	s.loaded = keys
	return keys, nil
}
