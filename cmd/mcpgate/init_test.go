package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIRefusesMissingDatabase checks that an admin command given a data
// dir with no database (a typo) refuses it, naming the flag, and creates
// nothing; init creates the database the commands then use.
func TestCLIRefusesMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "does-not-exist")
	for _, args := range [][]string{
		{"user", "list"},
		{"user", "create", "alice"},
		{"key", "list"},
		{"key", "create", "--user", "alice"},
		{"agent", "list"},
		{"agent", "show", "demo"},
	} {
		out, errOut, err := runCLI(t, nil, append(args, "--data-dir", dir)...)
		if !errors.Is(err, errUsage) || exitCode(err) != 2 || out != "" || !strings.Contains(errOut, "--data-dir "+dir) {
			t.Errorf("%v on a missing data dir: err %v (exit %d), stdout %q, stderr %q; want exit 2 naming --data-dir", args, err, exitCode(err), out, errOut)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the commands left %s behind (%v)", dir, err)
	}
	_, errOut, err := runCLI(t, nil, "init", "--data-dir", dir)
	if err != nil || !strings.Contains(errOut, "created a new database") {
		t.Fatalf("init: %v, %q", err, errOut)
	}
	if list := mustRunCLI(t, dir, "user", "list"); !strings.HasPrefix(list, "ID") {
		t.Errorf("user list after init = %q", list)
	}
}

// TestServeSaysWhenItCreatesADatabase checks that serve logs the new
// database on the first start only.
func TestServeSaysWhenItCreatesADatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	for i, want := range []bool{true, false} {
		env, _, stderr := newTestEnv(nil)
		m := NewMain(env)
		if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir}); err != nil {
			t.Fatal(err)
		}
		if err := m.Run(context.Background()); err != nil {
			m.Close()
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr.String(), "created a new database"); got != want {
			t.Errorf("start %d: logged a new database = %v, want %v:\n%s", i+1, got, want, stderr)
		}
	}
}
