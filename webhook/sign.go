package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery. HeaderID carries the event's ID (the same on
// every attempt and redelivery, for receivers to drop duplicates),
// HeaderTimestamp when the attempt was signed in Unix seconds, and
// HeaderSignature "sha256=" and the hex HMAC-SHA256 of
// "<timestamp>.<body>" under the webhook's secret.
const (
	HeaderID        = "Webhook-Id"
	HeaderTimestamp = "Webhook-Timestamp"
	HeaderSignature = "Webhook-Signature"
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, either way, before Verify refuses it: five minutes.
// Each attempt is signed afresh, so a retry hours later still verifies.
const DefaultTolerance = 5 * time.Minute

// Verify's errors.
var (
	ErrMalformed = errors.New("webhook: the timestamp or signature header is missing or malformed")
	ErrExpired   = errors.New("webhook: the timestamp is outside the tolerance")
	ErrMismatch  = errors.New("webhook: the signature does not match the body")
)

// Sign returns the signature header value of body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	return "sha256=" + hex.EncodeToString(mac(secret, strconv.FormatInt(t.Unix(), 10), body))
}

// mac is the HMAC-SHA256 of "timestamp.body".
func mac(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a delivery's headers against the exact body received: the
// signature must match and the timestamp be within tolerance of now
// (DefaultTolerance when tolerance <= 0). It returns ErrMalformed,
// ErrExpired or ErrMismatch.
func Verify(secret []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec <= 0 || strconv.FormatInt(sec, 10) != ts {
		return ErrMalformed
	}
	got, ok := strings.CutPrefix(h.Get(HeaderSignature), "sha256=")
	sum, err := hex.DecodeString(got)
	if !ok || err != nil || len(sum) != sha256.Size {
		return ErrMalformed
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance || sec > 1<<40 {
		return ErrExpired
	}
	if !hmac.Equal(sum, mac(secret, ts, body)) {
		return ErrMismatch
	}
	return nil
}
