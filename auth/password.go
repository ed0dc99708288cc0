package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: 19 MiB of memory, two passes, one lane, which is
// the OWASP baseline for interactive logins.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
)

// MinPasswordLen is the shortest password the API and the CLI accept.
const MinPasswordLen = 8

// HashPassword returns a PHC-formatted argon2id hash of password.
func HashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("read salt: %w", err)
	}
	sum := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// CheckPassword reports whether password matches a hash made by
// HashPassword, comparing in constant time.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m, t uint32
	var p uint8
	// argon2 panics on zero passes or lanes: a malformed hash must not.
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || !sane(m, t, p) {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// sane bounds the cost a stored hash may demand, so that a hash from an
// untrusted source cannot make a login allocate terabytes: at most 1 GiB
// of memory, 10 passes and 16 lanes.
func sane(memKiB, passes uint32, lanes uint8) bool {
	return memKiB > 0 && memKiB <= 1<<20 && passes > 0 && passes <= 10 && lanes > 0 && lanes <= 16
}

// NewPassword returns a random password of 20 base62 characters (about
// 119 bits), for accounts the gateway sets up itself, such as the demo user.
func NewPassword() string { return randomBase62(20) }
