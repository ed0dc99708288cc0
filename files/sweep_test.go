package files_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/files"
	"github.com/mcpgate/mcpgate/sqlite"
)

// TestSweep runs the sweeper over a real SQLite store and blob directory
// with a clock moved forward: expired reservations and files past the
// retention go, in batches of one; a blob another file still has stays
// until that file goes too; a left-over temporary file goes.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := t.TempDir()
	blobs := files.Dir{Path: dir}
	sum, _, err := blobs.Put(ctx, strings.NewReader("shared bytes"), 100)
	if err != nil {
		t.Fatal(err)
	}
	real := time.Now()
	mk := func(id string, expires time.Time) {
		t.Helper()
		f := &mcpgate.File{ID: id, UserID: "u1", Filename: id, ContentType: "text/plain", Size: 12, Status: mcpgate.FilePending, ExpiresAt: expires}
		if err := store.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	mk("unused_1", real.Add(time.Hour))
	mk("unused_2", real.Add(time.Hour))
	mk("ready", real.Add(time.Hour))
	mk("sharing", real.Add(365*24*time.Hour))
	must(t, store.MoveFile(ctx, "ready", mcpgate.FilePending, mcpgate.FileReady, sum))
	must(t, store.MoveFile(ctx, "sharing", mcpgate.FilePending, mcpgate.FileUploading, sum))
	if err := os.WriteFile(filepath.Join(dir, "tmp", "upload-left"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	now := real.Add(2 * time.Hour)
	s := &files.Sweeper{Files: store, Blobs: blobs, Retention: time.Hour, Batch: 1, Now: func() time.Time { return now }}
	if n, err := s.Sweep(ctx); err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want the two reservations and the ready file", n, err)
	}
	if _, err := store.FindFile(ctx, "sharing"); err != nil {
		t.Fatalf("the file not due: %v", err)
	}
	if _, err := blobs.Open(ctx, sum); err != nil {
		t.Fatalf("the blob another file has was removed: %v", err)
	}
	now = real.Add(2 * 365 * 24 * time.Hour)
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("second Sweep = %d, %v; want the last file", n, err)
	}
	if _, err := blobs.Open(ctx, sum); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Fatalf("the blob no file has: %v, want removed", err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Fatalf("%d temporary files left", len(left))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
