package webhook_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/webhook"
)

// itoa writes a Unix time as the timestamp header does.
func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// FuzzVerify checks that Verify never panics, refuses with one of its
// three errors, accepts what Sign made, and never accepts headers for a
// body or a secret other than the ones they were made for.
func FuzzVerify(f *testing.F) {
	secret := []byte("whsec_fuzz")
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"evt_1"}`)
	f.Add(itoa(now.Unix()), webhook.Sign(secret, now, body), body, int64(0))
	f.Add("1800000000", "sha256=zz", body, int64(30))
	f.Add("-1", "sha256=", []byte{}, int64(-400))
	f.Add("99999999999999999999", "sha256=00", []byte("x"), int64(1))
	f.Add("0018", "", []byte("x"), int64(0))
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte, offset int64) {
		at := now.Add(time.Duration(offset) * time.Second)
		h := http.Header{}
		h.Set(webhook.HeaderTimestamp, ts)
		h.Set(webhook.HeaderSignature, sig)
		err := webhook.Verify(secret, h, body, at, 0)
		if err != nil && !errors.Is(err, webhook.ErrMalformed) && !errors.Is(err, webhook.ErrExpired) && !errors.Is(err, webhook.ErrMismatch) {
			t.Fatalf("Verify(%q, %q) = %v, not one of the package's errors", ts, sig, err)
		}
		if err == nil {
			if webhook.Verify(secret, h, append(body, 'x'), at, 0) == nil {
				t.Fatalf("headers %q %q verify two bodies", ts, sig)
			}
			if webhook.Verify([]byte("other"), h, body, at, 0) == nil {
				t.Fatalf("headers %q %q verify under two secrets", ts, sig)
			}
		}
		h.Set(webhook.HeaderTimestamp, itoa(at.Unix()))
		h.Set(webhook.HeaderSignature, webhook.Sign(secret, at, body))
		if at.Unix() > 0 && at.Unix() < 1<<40 {
			if err := webhook.Verify(secret, h, body, at, 0); err != nil {
				t.Fatalf("Verify of Sign at %v = %v", at, err)
			}
		}
	})
}
