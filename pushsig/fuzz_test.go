package pushsig_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/pushsig"
)

// FuzzVerify checks that Verify never panics, refuses with one of its
// three errors, accepts what Sign made, and never accepts a header for a
// body other than the one it was accepted for.
func FuzzVerify(f *testing.F) {
	secret := []byte("s3cret")
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"msg_1"}`)
	f.Add(pushsig.Sign(secret, now, body), body, int64(0))
	f.Add("t=1800000000,v1=00,v1=zz", body, int64(30))
	f.Add("t=+1800000000, v1="+pushsig.Sign(secret, now, body)[len("t=1800000000,v1="):], body, int64(-400))
	f.Add("t=99999999999999999999,v1=", []byte{}, int64(1))
	f.Add(",,=,t=", []byte("x"), int64(0))
	f.Fuzz(func(t *testing.T, header string, body []byte, offset int64) {
		at := now.Add(time.Duration(offset) * time.Second)
		err := pushsig.Verify(secret, header, body, at, 0)
		if err != nil && !errors.Is(err, pushsig.ErrMalformed) && !errors.Is(err, pushsig.ErrExpired) && !errors.Is(err, pushsig.ErrMismatch) {
			t.Fatalf("Verify(%q) = %v, not one of the package's errors", header, err)
		}
		if err == nil {
			if pushsig.Verify(secret, header, append(body, 'x'), at, 0) == nil {
				t.Fatalf("header %q verifies %q and %q", header, body, append(body, 'x'))
			}
			if pushsig.Verify([]byte("other"), header, body, at, 0) == nil {
				t.Fatalf("header %q verifies under two secrets", header)
			}
		}
		if err := pushsig.Verify(secret, pushsig.Sign(secret, at, body), body, at, 0); err != nil {
			t.Fatalf("Verify of Sign at %v = %v", at, err)
		}
	})
}
