package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeLocksTheDataDir: a second serve on a SQLite data dir that
// another serve uses refuses to start, saying so, and starts once the
// first has closed; a CLI command still opens the database meanwhile.
func TestServeLocksTheDataDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	vars := map[string]string{"MCPGATE_ADDR": "127.0.0.1:0", "MCPGATE_DATA_DIR": dir, "MCPGATE_LOG_LEVEL": "warn"}
	first := mustStartFromEnv(t, vars)
	if out, errOut, err := runCLI(t, map[string]string{"MCPGATE_DATA_DIR": dir}, "user", "list"); err != nil {
		t.Errorf("user list while serve runs: %v %s %s", err, out, errOut)
	}
	env, _, _ := newTestEnv(vars)
	second := NewMain(env)
	if err := second.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	err := second.Run(context.Background())
	second.Close()
	if err == nil || !strings.Contains(err.Error(), "another mcpgate serve is using the data dir") {
		t.Fatalf("a second serve on the data dir = %v, want a refusal", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	mustStartFromEnv(t, vars)
}
