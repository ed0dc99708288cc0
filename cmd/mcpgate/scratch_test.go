package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestScratch(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.yaml")
	os.WriteFile(cfg, []byte("users:\n  - name: alice\n    colour: blue\n"), 0o600)
	env, _, _ := newTestEnv(nil)
	m := NewMain(env)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--config", cfg}); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	t.Logf("Run: %v", err)
	addr := m.Addr()
	t.Logf("Close: %v", m.Close())
	ln, err := net.Listen("tcp", addr)
	t.Logf("relisten: %v", err)
	if ln != nil {
		ln.Close()
	}
}
