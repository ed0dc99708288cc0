package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/sqlite"
)

// helperEnv tells a re-executed test binary to act as another process
// using the database at the path it holds.
const helperEnv = "MCPGATE_SQLITE_HELPER_DB"

// keysPerProcess is how many keys each process writes.
const keysPerProcess = 50

// TestHelperProcess is the other process of TestTwoProcesses; it does
// nothing unless helperEnv is set.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("only runs as a helper process")
	}
	if err := writeKeys(path, "helper-"+fmt.Sprint(os.Getpid())); err != nil {
		t.Fatal(err)
	}
}

// writeKeys opens the database at path, as a process would, and writes a
// user and keysPerProcess keys.
func writeKeys(path, user string) error {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	u := &mcpgate.User{Name: user}
	if err := s.CreateUser(ctx, u); err != nil {
		return err
	}
	for i := range keysPerProcess {
		k := &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID, Hash: fmt.Sprintf("%s-%d", user, i)}
		if err := s.CreateKey(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// TestTwoProcesses has three processes create a new database file and write
// to it at the same time, as the server and admin commands may: all must
// succeed, migrations included.
func TestTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "mcpgate.db")
	var helpers []*exec.Cmd
	var outputs []*bytes.Buffer
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), helperEnv+"="+path)
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		helpers, outputs = append(helpers, cmd), append(outputs, out)
	}
	errMain := writeKeys(path, "main")
	for i, cmd := range helpers {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process: %v\n%s", err, outputs[i])
		}
	}
	if errMain != nil {
		t.Fatal(errMain)
	}
	s := mustOpen(t, path)
	keys, err := s.ListKeys(context.Background(), mcpgate.KeyFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3*keysPerProcess {
		t.Fatalf("%d keys, want %d", len(keys), 3*keysPerProcess)
	}
}

// TestReopen checks that data survives closing, that closing again does
// nothing, and that opening a migrated file migrates nothing.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mcpgate.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u := &mcpgate.User{Name: "alice"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing again: %v", err)
	}
	got, err := mustOpen(t, path).FindUserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != u.ID {
		t.Fatalf("reopened user %q, want %q", got.ID, u.ID)
	}
}
