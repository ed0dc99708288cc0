// Package seal encrypts at rest the secrets the gateway must read back,
// such as webhook signing secrets, with AES-256-GCM under one key the
// operator holds (--secret-key, or a key file under --data-dir).
//
// It imports only the standard library; it must not import any package of
// the module.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the size of a key: 32 bytes, for AES-256.
const KeySize = 32

// prefix marks sealed values of this format, so that a later format can
// be told apart.
const prefix = "v1:"

// ErrOpen is returned for a value that does not open under the key: made
// under another key, or altered.
var ErrOpen = errors.New("seal: the value does not open under this key (was --secret-key changed?)")

// Box seals and opens values under one key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a KeySize-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: the key has %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain with a fresh random nonce and returns it as text.
func (b *Box) Seal(plain []byte) string {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + base64.RawStdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, plain, nil))
}

// Sealed reports whether s has the form Seal returns (it may still not
// open under a given key).
func Sealed(s string) bool { return strings.HasPrefix(s, prefix) }

// Open decrypts what Seal returned; ErrOpen when it cannot.
func (b *Box) Open(sealed string) ([]byte, error) {
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, prefix))
	if err != nil || !strings.HasPrefix(sealed, prefix) || len(raw) < b.aead.NonceSize() {
		return nil, ErrOpen
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// ParseKey reads a key written as 64 hex digits or as base64 (standard or
// URL alphabet, padded or not) of KeySize bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if k, err := hex.DecodeString(s); err == nil && len(k) == KeySize {
		return k, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("seal: a key is %d bytes written as 64 hex digits or base64", KeySize)
}

// LoadOrCreateKey reads the key file at path, or makes one with a random
// key, readable by its owner only, when there is none.
func LoadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return ParseKey(string(b))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreateKey(path) // another process made it first
	} else if err != nil {
		return nil, fmt.Errorf("create key file: %w", err)
	}
	_, err = f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("write key file: %w", err)
	}
	return key, nil
}

// checkLabel is what Check authenticates under the key.
const checkLabel = "mcpgate secret key check v1"

// Check returns a short text that tells keys apart without revealing them:
// the hex of the first 16 bytes of HMAC-SHA256 of a fixed label under key.
// Processes that must share one key store and compare it.
func Check(key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(checkLabel))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}
