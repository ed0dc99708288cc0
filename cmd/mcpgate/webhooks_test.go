package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeRefusesBadWebhookFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--secret-key", "c2hvcnQ="},
		{"--webhook-backoff", "0s"},
		{"--webhook-timeout", "-1s"},
	} {
		env, _, stderr := newTestEnv(nil)
		if err := NewMain(env).ParseFlags(args); !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("serve %v = %v, stderr %q; want a usage error naming the flag", args, err, stderr)
		}
	}
}

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
