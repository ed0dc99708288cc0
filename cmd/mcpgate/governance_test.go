package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGovernanceSettings checks the order: a flag, then the config file,
// then the default.
func TestGovernanceSettings(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte("idempotency_ttl: 2h\ncall_retention: 48h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args           []string
		ttl, retention time.Duration
	}{
		{nil, 24 * time.Hour, 30 * 24 * time.Hour},
		{[]string{"--config", cfg}, 2 * time.Hour, 48 * time.Hour},
		{[]string{"--config", cfg, "--idempotency-ttl", "5m"}, 5 * time.Minute, 48 * time.Hour},
		{[]string{"--call-retention", "1h"}, 24 * time.Hour, time.Hour},
	} {
		env, _, _ := newTestEnv(nil)
		m := NewMain(env)
		if err := m.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		ttl, retention := m.governanceSettings()
		if ttl != tc.ttl || retention != tc.retention {
			t.Errorf("serve %v: ttl %v, retention %v; want %v, %v", tc.args, ttl, retention, tc.ttl, tc.retention)
		}
	}
}
