// Package pushsig signs and verifies the envelopes mcpgate pushes to an
// agent's push_url.
//
// The signature travels in the Mcpgate-Signature header as
//
//	t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// where t is when the gateway sent the request. A receiver recomputes the
// HMAC over the exact bytes it received and refuses timestamps older than a
// few minutes (Verify's maxAge; DefaultMaxAge is five minutes), so a
// captured request cannot be replayed later.
//
// The package uses only the standard library; it must not import mcpgate or
// any other package of the module, so agents can use it on its own.
package pushsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header is the name of the HTTP header that carries the signature.
const Header = "Mcpgate-Signature"

// MessageIDHeader is the name of the HTTP header that carries the pushed
// message's ID, so a receiver can drop duplicates before parsing the body.
const MessageIDHeader = "Mcpgate-Message-Id"

// DefaultMaxAge is how old a signature's timestamp may be, at most, when
// the receiver checks it.
const DefaultMaxAge = 5 * time.Minute

// maxSkew is how far in the future a timestamp may lie, for clocks that
// disagree a little.
const maxSkew = time.Minute

// Errors Verify returns, wrapped with details.
var (
	// ErrMalformed means the header is not t=<seconds>,v1=<hex>.
	ErrMalformed = errors.New("pushsig: malformed signature header")
	// ErrExpired means the timestamp is older than maxAge or too far ahead.
	ErrExpired = errors.New("pushsig: signature timestamp out of range")
	// ErrMismatch means no v1 signature matches the body.
	ErrMismatch = errors.New("pushsig: signature does not match")
)

// Sign returns the Mcpgate-Signature header value for body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

// Verify checks that header signs body with secret at a time no older than
// maxAge before now (DefaultMaxAge when maxAge <= 0) and not more than a
// minute after it. It returns an error wrapping ErrMalformed, ErrExpired or
// ErrMismatch otherwise. Several v1 entries are allowed (while a secret is
// rotated); one matching is enough.
func Verify(secret []byte, header string, body []byte, now time.Time, maxAge time.Duration) error {
	ts, sigs, err := parse(header)
	if err != nil {
		return err
	}
	if err := checkAge(ts, now, maxAge); err != nil {
		return err
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrMismatch
}

// mac computes HMAC-SHA256(secret, "<ts>.<body>").
func mac(secret []byte, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// parse splits a header into its timestamp and decoded v1 signatures.
func parse(header string) (ts string, sigs [][]byte, err error) {
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return "", nil, fmt.Errorf("%w: %q has no '='", ErrMalformed, part)
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return "", nil, fmt.Errorf("%w: v1 is not a hex SHA-256 HMAC", ErrMalformed)
			}
			sigs = append(sigs, b)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return "", nil, fmt.Errorf("%w: need t=<unix seconds>,v1=<hex>", ErrMalformed)
	}
	return ts, sigs, nil
}

// checkAge refuses a timestamp outside [now-maxAge, now+maxSkew].
func checkAge(ts string, now time.Time, maxAge time.Duration) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: t=%q is not unix seconds", ErrMalformed, ts)
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	at := time.Unix(sec, 0)
	if at.Before(now.Add(-maxAge)) || at.After(now.Add(maxSkew)) {
		return fmt.Errorf("%w: signed at %s, now %s", ErrExpired, at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}
