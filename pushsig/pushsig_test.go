package pushsig_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/pushsig"
)

func TestSignVerify(t *testing.T) {
	secret := []byte("s3cret")
	body := []byte(`{"id":"msg_1","type":"chat_message"}`)
	now := time.Unix(1_800_000_000, 0)
	sig := pushsig.Sign(secret, now, body)
	tests := []struct {
		name   string
		secret []byte
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", secret, sig, body, now, nil},
		{"valid after four minutes", secret, sig, body, now.Add(4 * time.Minute), nil},
		{"second v1 matches", secret, strings.Replace(sig, "v1=", "v1="+strings.Repeat("0", 64)+",v1=", 1), body, now, nil},
		{"expired", secret, sig, body, now.Add(6 * time.Minute), pushsig.ErrExpired},
		{"from the future", secret, sig, body, now.Add(-2 * time.Minute), pushsig.ErrExpired},
		{"other secret", []byte("other"), sig, body, now, pushsig.ErrMismatch},
		{"body changed", secret, sig, append([]byte(" "), body...), now, pushsig.ErrMismatch},
		{"empty", secret, "", body, now, pushsig.ErrMalformed},
		{"no v1", secret, "t=1800000000", body, now, pushsig.ErrMalformed},
		{"bad hex", secret, "t=1800000000,v1=zz", body, now, pushsig.ErrMalformed},
		{"bad t", secret, "t=soon,v1=" + strings.Repeat("0", 64), body, now, pushsig.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pushsig.Verify(tt.secret, tt.header, tt.body, tt.now, 0)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignFormat(t *testing.T) {
	// The expected value was computed with openssl dgst -sha256 -hmac key.
	got := pushsig.Sign([]byte("key"), time.Unix(1_700_000_000, 0), []byte("body"))
	want := "t=1700000000,v1=47b6ce0fca59474308e2921c247cb2493dce6b8101d90ac05bd0c6a37d0e046e"
	if got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}
