package webhook_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/webhook"
)

// headers returns the headers of a delivery of body signed at t.
func headers(secret []byte, t time.Time, body []byte) http.Header {
	h := http.Header{}
	h.Set(webhook.HeaderTimestamp, itoa(t.Unix()))
	h.Set(webhook.HeaderSignature, webhook.Sign(secret, t, body))
	return h
}

func TestVerify(t *testing.T) {
	secret, body := []byte("whsec_test"), []byte(`{"id":"evt_1"}`)
	sent := time.Unix(1_800_000_000, 0)
	good := headers(secret, sent, body)
	tests := []struct {
		name   string
		h      http.Header
		body   []byte
		now    time.Time
		secret []byte
		want   error
	}{
		{"valid", good, body, sent.Add(time.Minute), secret, nil},
		{"clock behind", good, body, sent.Add(-4 * time.Minute), secret, nil},
		{"too old", good, body, sent.Add(5*time.Minute + time.Second), secret, webhook.ErrExpired},
		{"from the future", good, body, sent.Add(-6 * time.Minute), secret, webhook.ErrExpired},
		{"other body", good, []byte(`{"id":"evt_2"}`), sent, secret, webhook.ErrMismatch},
		{"other secret", good, body, sent, []byte("other"), webhook.ErrMismatch},
		{"no headers", http.Header{}, body, sent, secret, webhook.ErrMalformed},
		{"bad prefix", with(good, webhook.HeaderSignature, "sha1=00"), body, sent, secret, webhook.ErrMalformed},
		{"short mac", with(good, webhook.HeaderSignature, "sha256=abcd"), body, sent, secret, webhook.ErrMalformed},
		{"signed timestamp changed", with(good, webhook.HeaderTimestamp, itoa(sent.Unix()+1)), body, sent, secret, webhook.ErrMismatch},
		{"timestamp with a sign", with(good, webhook.HeaderTimestamp, "+"+itoa(sent.Unix())), body, sent, secret, webhook.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := webhook.Verify(tt.secret, tt.h, tt.body, tt.now, 0); !errors.Is(err, tt.want) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

// with returns a copy of h with key set to v.
func with(h http.Header, key, v string) http.Header {
	c := h.Clone()
	c.Set(key, v)
	return c
}
