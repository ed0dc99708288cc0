package seal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the package on the standard library.
func TestImports(t *testing.T) { deptest.Check(t) }

func TestSealOpens(t *testing.T) {
	b, err := New(bytes.Repeat([]byte{7}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := b.Seal([]byte("whsec_x")), b.Seal([]byte("whsec_x"))
	if s1 == s2 {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	if got, err := b.Open(s1); err != nil || string(got) != "whsec_x" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	other, _ := New(bytes.Repeat([]byte{8}, KeySize))
	for _, bad := range []string{"", "v1:", "v1:!!", s1[:len(s1)-2], "v2:" + s1[3:]} {
		if _, err := b.Open(bad); !errors.Is(err, ErrOpen) {
			t.Errorf("Open(%q) = %v, want ErrOpen", bad, err)
		}
	}
	if _, err := other.Open(s1); !errors.Is(err, ErrOpen) {
		t.Errorf("another key opened the value: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	key := bytes.Repeat([]byte{0xab}, KeySize)
	for _, s := range []string{hex.EncodeToString(key), "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s\n"} {
		if k, err := ParseKey(s); err != nil || !bytes.Equal(k, key) {
			t.Errorf("ParseKey(%q) = %x, %v", s, k, err)
		}
	}
	if _, err := ParseKey("c2hvcnQ="); err == nil {
		t.Error("a short key was accepted")
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	k1, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("second load = %x, %v; want %x", k2, err, k1)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestSealed tells sealed values from others by their form.
func TestSealed(t *testing.T) {
	b, err := New(bytes.Repeat([]byte{1}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	if !Sealed(b.Seal([]byte("x"))) || Sealed("plain") || Sealed("") {
		t.Error("Sealed misjudged a value")
	}
}

// TestCheck: one key always gives one check, another key another, and the
// check does not contain the key.
func TestCheck(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	if Check(a) != Check(bytes.Clone(a)) {
		t.Error("one key gave two checks")
	}
	if Check(a) == Check(b) {
		t.Error("two keys gave one check")
	}
	if c := Check(a); len(c) != 32 || strings.Contains(c, hex.EncodeToString(a[:4])) {
		t.Errorf("Check = %q", c)
	}
}
