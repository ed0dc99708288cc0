package auth

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

func TestHashPassword(t *testing.T) {
	h1 := mustHashPassword(t, "correct horse")
	h2 := mustHashPassword(t, "correct horse")
	phc := regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)
	if !phc.MatchString(h1) {
		t.Errorf("hash %q is not PHC argon2id with the baseline parameters", h1)
	}
	if h1 == h2 {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	if strings.Contains(h1, "correct horse") {
		t.Error("hash holds the password")
	}
	tests := []struct {
		name     string
		hash     string
		password string
		want     bool
	}{
		{"right", h1, "correct horse", true},
		{"right, other salt", h2, "correct horse", true},
		{"wrong", h1, "correct horsE", false},
		{"empty", h1, "", false},
		{"prefix", h1, "correct", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckPassword(tt.hash, tt.password); got != tt.want {
				t.Errorf("CheckPassword = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCheckPasswordOtherParameters checks that a hash made with other
// parameters than today's still verifies, since they are read from it.
func TestCheckPasswordOtherParameters(t *testing.T) {
	salt := []byte("0123456789abcdef")
	sum := argon2.IDKey([]byte("pw"), salt, 1, 64, 2, 16)
	enc := base64.RawStdEncoding
	hash := fmt.Sprintf("$argon2id$v=19$m=64,t=1,p=2$%s$%s", enc.EncodeToString(salt), enc.EncodeToString(sum))
	if !CheckPassword(hash, "pw") {
		t.Error("CheckPassword rejects a hash with other parameters")
	}
	if CheckPassword(hash, "pW") {
		t.Error("CheckPassword accepts a wrong password")
	}
}

func TestCheckPasswordMalformed(t *testing.T) {
	good := mustHashPassword(t, "pw")
	parts := strings.Split(good, "$") // "", argon2id, v=19, params, salt, sum
	with := func(i int, v string) string {
		p := append([]string(nil), parts...)
		p[i] = v
		return strings.Join(p, "$")
	}
	tests := []struct{ name, hash string }{
		{"empty", ""},
		{"plain text", "pw"},
		{"bcrypt", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"},
		{"argon2i", with(1, "argon2i")},
		{"too few parts", strings.Join(parts[:5], "$")},
		{"too many parts", good + "$x"},
		{"params not numbers", with(3, "m=x,t=2,p=1")},
		{"params missing", with(3, "")},
		{"zero lanes", with(3, "m=19456,t=2,p=0")},
		{"zero passes", with(3, "m=19456,t=0,p=1")},
		{"lanes overflow", with(3, "m=19456,t=2,p=256")},
		{"salt not base64", with(4, "!!!!")},
		{"sum not base64", with(5, "!!!!")},
		{"empty sum", with(5, "")},
		{"other sum", with(5, base64.RawStdEncoding.EncodeToString(make([]byte, 32)))},
		{"short sum", with(5, parts[5][:20])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if CheckPassword(tt.hash, "pw") {
				t.Errorf("CheckPassword(%q) = true", tt.hash)
			}
		})
	}
}

// mustHashPassword hashes a password or stops the test.
func mustHashPassword(tb testing.TB, pw string) string {
	tb.Helper()
	h, err := HashPassword(pw)
	if err != nil {
		tb.Fatalf("HashPassword: %v", err)
	}
	return h
}
