package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/seal"
)

// TestServeMakesTheSecretKeyFile checks that a gateway without
// --secret-key makes a key file, readable by its owner only, and that one
// with it makes none.
func TestServeMakesTheSecretKeyFile(t *testing.T) {
	g := mustStartGateway(t)
	fi, err := os.Stat(filepath.Join(g.Config.store.dataDir, "secret.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret.key: %v, %v", fi, err)
	}
	g2 := mustStartGateway(t, "--secret-key", strings.Repeat("ab", 32))
	if _, err := os.Stat(filepath.Join(g2.Config.store.dataDir, "secret.key")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a key file was made beside --secret-key: %v", err)
	}
}

// TestServeRefusesAnotherSecretKey: every process on one database must
// hold the key its secrets were sealed with. On SQLite a restart with
// another --secret-key is refused and one with the first key is not; on
// PostgreSQL a second replica with a key file of its own (no
// MCPGATE_SECRET_KEY) is refused, with a message that says what to set.
func TestServeRefusesAnotherSecretKey(t *testing.T) {
	t.Parallel()
	first, other := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		vars := map[string]string{"MCPGATE_ADDR": "127.0.0.1:0", "MCPGATE_DATA_DIR": filepath.Join(t.TempDir(), "data"), "MCPGATE_LOG_LEVEL": "warn"}
		for _, c := range []struct {
			key    string
			refuse bool
		}{{first, false}, {other, true}, {first, false}} {
			vars["MCPGATE_SECRET_KEY"] = c.key
			mustRefuseKey(t, vars, c.refuse)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := pgtest.Database(t, pgtest.Admin(t))
		for _, refuse := range []bool{false, true} {
			vars := map[string]string{"MCPGATE_ADDR": "127.0.0.1:0", "MCPGATE_DATA_DIR": filepath.Join(t.TempDir(), "data"), "MCPGATE_LOG_LEVEL": "warn", "MCPGATE_DB": dsn}
			mustRefuseKey(t, vars, refuse)
		}
	})
}

// mustRefuseKey runs serve in an environment of vars and checks that it
// refuses to start for its secret key when refuse is set, and starts
// otherwise; it closes what started.
func mustRefuseKey(t *testing.T, vars map[string]string, refuse bool) {
	t.Helper()
	env, _, stderr := newTestEnv(vars)
	m := NewMain(env)
	if err := m.ParseFlags(nil); err != nil {
		t.Fatalf("ParseFlags: %v\n%s", err, stderr)
	}
	err := m.Run(context.Background())
	if cerr := m.Close(); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	switch {
	case refuse && (err == nil || !strings.Contains(err.Error(), "MCPGATE_SECRET_KEY")):
		t.Errorf("serve with key %q = %v, want a refusal naming MCPGATE_SECRET_KEY", vars["MCPGATE_SECRET_KEY"], err)
	case !refuse && err != nil:
		t.Errorf("serve with key %q = %v\n%s", vars["MCPGATE_SECRET_KEY"], err, stderr)
	}
}

// TestSigningKeysSealedAtRest: the signing keys of access tokens and file
// URLs are stored sealed under the secret key and read back opened; a key
// an earlier release stored in plain form is sealed at the next start and
// keeps its secret.
func TestSigningKeysSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	vars := map[string]string{"MCPGATE_ADDR": "127.0.0.1:0", "MCPGATE_DATA_DIR": filepath.Join(t.TempDir(), "data"),
		"MCPGATE_LOG_LEVEL": "warn", "MCPGATE_SECRET_KEY": strings.Repeat("ab", 32)}
	legacy := &mcpgate.OAuthSigningKey{ID: "sk_legacy", Secret: bytes.Repeat([]byte{7}, seal.KeySize)}
	first := mustStartFromEnv(t, vars)
	mustSealedKeys(t, first, 1)
	if err := first.store.CreateOAuthSigningKey(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	opened := mustSealedKeys(t, mustStartFromEnv(t, vars), 2)
	if !bytes.Equal(opened["sk_legacy"], legacy.Secret) {
		t.Errorf("the plain key opened as %x after it was sealed, want %x", opened["sk_legacy"], legacy.Secret)
	}
}

// mustSealedKeys checks that m's store holds n signing keys, every one
// sealed, and returns their secrets as m reads them, opened, by ID.
func mustSealedKeys(t *testing.T, m *Main, n int) map[string][]byte {
	t.Helper()
	stored, err := m.store.ListOAuthSigningKeys(context.Background())
	if err != nil || len(stored) != n {
		t.Fatalf("stored signing keys: %d, %v; want %d", len(stored), err, n)
	}
	for _, k := range stored {
		if !seal.Sealed(string(k.Secret)) {
			t.Errorf("signing key %s is stored in plain form", k.ID)
		}
	}
	keys, err := m.keys.ListOAuthSigningKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	opened := map[string][]byte{}
	for _, k := range keys {
		if len(k.Secret) != seal.KeySize {
			t.Errorf("signing key %s opened to %d bytes", k.ID, len(k.Secret))
		}
		opened[k.ID] = k.Secret
	}
	return opened
}

// TestServeRefusesBadSecretKey refuses a key that is not 32 bytes, in hex
// or base64, naming the flag.
func TestServeRefusesBadSecretKey(t *testing.T) {
	for _, key := range []string{"c2hvcnQ=", strings.Repeat("ab", 31), "not a key"} {
		env, _, stderr := newTestEnv(nil)
		if err := NewMain(env).ParseFlags([]string{"--secret-key", key}); !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "--secret-key") {
			t.Errorf("serve --secret-key %q = %v, stderr %q; want a usage error naming the flag", key, err, stderr)
		}
	}
}
