package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// TestServeFromEnvironment starts `serve` with no arguments, configured
// by MCPGATE_* variables alone as the container image runs it, on SQLite
// and on PostgreSQL; `mcpgate healthcheck`, given the same MCPGATE_ADDR,
// passes while it is ready and fails once it drains.
func TestServeFromEnvironment(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{
				"MCPGATE_ADDR": "127.0.0.1:0", "MCPGATE_DATA_DIR": filepath.Join(t.TempDir(), "data"),
				"MCPGATE_LOG_LEVEL": "warn", "MCPGATE_DRAIN_TIMEOUT": "7s", "MCPGATE_ALLOWED_HOSTS": "mcp.internal",
			}
			if engine == "postgres" {
				vars["MCPGATE_DB"] = pgtest.Database(t, pgtest.Admin(t))
			}
			m := mustStartFromEnv(t, vars)
			if m.Config.drain.timeout != 7*time.Second || len(m.Config.AllowedHosts) != 1 {
				t.Errorf("the environment was not read: drain timeout %v, allowed hosts %v", m.Config.drain.timeout, m.Config.AllowedHosts)
			}
			check := map[string]string{"MCPGATE_ADDR": m.Addr()}
			if out, errOut, err := runCLI(t, check, "healthcheck"); err != nil || !strings.Contains(out, `"ok"`) {
				t.Errorf("healthcheck of a ready gateway: %v, %q %q", err, out, errOut)
			}
			m.StartDrain()
			if _, _, err := runCLI(t, check, "healthcheck"); err == nil || !strings.Contains(err.Error(), "draining") {
				t.Errorf("healthcheck of a draining gateway = %v, want an error saying draining", err)
			}
		})
	}
}

// mustStartFromEnv runs serve with no arguments in an environment of
// vars alone, and closes it when the test ends.
func mustStartFromEnv(t *testing.T, vars map[string]string) *Main {
	t.Helper()
	env, _, stderr := newTestEnv(vars)
	m := NewMain(env)
	if err := m.ParseFlags(nil); err != nil {
		t.Fatalf("ParseFlags: %v\n%s", err, stderr)
	}
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// TestReadyzURL: healthcheck turns serve's listen address into a loopback
// URL of /readyz.
func TestReadyzURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		":8094":          "http://127.0.0.1:8094/readyz",
		"0.0.0.0:8094":   "http://127.0.0.1:8094/readyz",
		"[::]:8094":      "http://127.0.0.1:8094/readyz",
		"127.0.0.1:9000": "http://127.0.0.1:9000/readyz",
		"[::1]:9000":     "http://[::1]:9000/readyz",
	} {
		if got := readyzURL(addr); got != want {
			t.Errorf("readyzURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
