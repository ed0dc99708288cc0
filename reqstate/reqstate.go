// Package reqstate signs and verifies the requestState of MCP 2026-07-28
// multi round-trip requests: an opaque, tamper-proof, expiring token the
// gateway hands a client in an InputRequiredResult and reads back from the
// client's retry. Any replica that shares the key verifies a token without
// a store; what the token refers to may still live on one replica only.
//
// It imports only the standard library; it must not import any package of
// the module.
package reqstate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// prefix marks tokens of this format, so that a later format can be told
// apart.
const prefix = "rs1."

// keyLabel derives the signing key from the operator's secret, so that the
// secret that seals stored values never signs anything itself.
const keyLabel = "mcpgate requestState v1"

// Errors Open returns.
var (
	// ErrTampered is a token that was not made by Sign under this key, or
	// was altered since.
	ErrTampered = errors.New("requestState failed its integrity check: it was altered, or made under another key")
	// ErrExpired is an authentic token past its expiry.
	ErrExpired = errors.New("requestState has expired")
)

// Signer signs and opens tokens under one key.
type Signer struct {
	key []byte
}

// New returns a Signer whose key is derived from secret, which every
// replica must share (the gateway's --secret-key material).
func New(secret []byte) *Signer {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(keyLabel))
	return &Signer{key: m.Sum(nil)}
}

// Sign returns a token carrying payload until expires. The payload is
// readable by whoever holds the token (it is signed, not encrypted).
func (s *Signer) Sign(payload []byte, expires time.Time) string {
	body := strconv.FormatInt(expires.UnixMilli(), 36) + "." + base64.RawURLEncoding.EncodeToString(payload)
	return prefix + body + "." + base64.RawURLEncoding.EncodeToString(s.mac(body))
}

// Open returns the payload of a token Sign made: ErrTampered when the
// token is not authentic, ErrExpired when it is but now is past its
// expiry.
func (s *Signer) Open(token string, now time.Time) ([]byte, error) {
	body, sig, ok := split(token)
	if !ok {
		return nil, ErrTampered
	}
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(body)) {
		return nil, ErrTampered
	}
	exp, enc, _ := strings.Cut(body, ".")
	ms, err := strconv.ParseInt(exp, 36, 64)
	if err != nil {
		return nil, ErrTampered
	}
	payload, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil {
		return nil, ErrTampered
	}
	if now.After(time.UnixMilli(ms)) {
		return nil, ErrExpired
	}
	return payload, nil
}

// split cuts a token into its signed body and its signature.
func split(token string) (body, sig string, ok bool) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || strings.Count(rest, ".") != 2 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// mac is the HMAC-SHA256 of body under the key.
func (s *Signer) mac(body string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}
