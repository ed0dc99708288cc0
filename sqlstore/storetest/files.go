package storetest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func fileTests() []test {
	return []test{
		{"CreateFind", testFileCreateFind},
		{"Move", testFileMove},
		{"MoveOnce", testFileMoveOnce},
		{"Sweep", testFileSweep},
	}
}

// newFile returns a pending file of user u1.
func newFile(id string) *mcpgate.File {
	return &mcpgate.File{ID: id, UserID: "u1", Filename: "a.txt", ContentType: "text/plain", Size: 5,
		Status: mcpgate.FilePending, ExpiresAt: time.Now().Add(time.Hour)}
}

func testFileCreateFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	f := newFile("file_1")
	must(t, s.CreateFile(ctx, f))
	if f.CreatedAt.IsZero() {
		t.Fatal("CreatedAt not set")
	}
	got, err := s.FindFile(ctx, "file_1")
	must(t, err)
	mustEqual(t, "file", got, f)
	mustCode(t, s.CreateFile(ctx, newFile("file_1")), mcpgate.ECONFLICT)
	_, err = s.FindFile(ctx, "file_2")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testFileMove(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	must(t, s.CreateFile(ctx, newFile("file_1")))
	must(t, s.MoveFile(ctx, "file_1", mcpgate.FilePending, mcpgate.FileUploading, ""))
	mustCode(t, s.MoveFile(ctx, "file_1", mcpgate.FilePending, mcpgate.FileUploading, ""), mcpgate.ECONFLICT)
	must(t, s.MoveFile(ctx, "file_1", mcpgate.FileUploading, mcpgate.FileReady, "abc"))
	got, err := s.FindFile(ctx, "file_1")
	must(t, err)
	if got.Status != mcpgate.FileReady || got.SHA256 != "abc" || !got.Ready() {
		t.Fatalf("after upload: status %q sha %q", got.Status, got.SHA256)
	}
	mustCode(t, s.MoveFile(ctx, "file_2", mcpgate.FilePending, mcpgate.FileUploading, ""), mcpgate.ENOTFOUND)
}

// testFileMoveOnce: of many concurrent moves out of pending, one wins,
// which is what makes an upload URL single use.
func testFileMoveOnce(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	must(t, s.CreateFile(ctx, newFile("file_1")))
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.MoveFile(ctx, "file_1", mcpgate.FilePending, mcpgate.FileUploading, "")
			if err == nil {
				won.Add(1)
			} else if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d moves won, want 1", won.Load())
	}
}

// testFileSweep: files not ready past their expiry and ready files
// created before the retention's start are deleted, in batches, and
// returned; the others stay. FileBlobInUse follows the rows.
func testFileSweep(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	now := time.Now()
	expired, pending, failed := newFile("file_expired"), newFile("file_pending"), newFile("file_failed")
	expired.ExpiresAt, failed.ExpiresAt = now.Add(-time.Minute), now.Add(-time.Minute)
	for _, f := range []*mcpgate.File{expired, pending, failed, newFile("file_ready")} {
		must(t, s.CreateFile(ctx, f))
	}
	must(t, s.MoveFile(ctx, "file_failed", mcpgate.FilePending, mcpgate.FileFailed, ""))
	must(t, s.MoveFile(ctx, "file_ready", mcpgate.FilePending, mcpgate.FileReady, "abc"))
	if used, err := s.FileBlobInUse(ctx, "abc"); err != nil || !used {
		t.Fatalf("FileBlobInUse(abc) = %v, %v; want true", used, err)
	}
	var swept []string
	for range 3 { // batches of one: two files are due
		got, err := s.SweepFiles(ctx, now, now.Add(-time.Hour), 1)
		must(t, err)
		for _, f := range got {
			swept = append(swept, f.ID)
		}
	}
	slices.Sort(swept)
	mustEqual(t, "swept", swept, []string{"file_expired", "file_failed"})
	got, err := s.SweepFiles(ctx, now, now.Add(time.Minute), 10)
	must(t, err)
	if len(got) != 1 || got[0].ID != "file_ready" || got[0].SHA256 != "abc" {
		t.Fatalf("past the retention: swept %+v, want file_ready", got)
	}
	if used, err := s.FileBlobInUse(ctx, "abc"); err != nil || used {
		t.Fatalf("FileBlobInUse(abc) after the sweep = %v, %v; want false", used, err)
	}
	_, err = s.FindFile(ctx, "file_pending")
	must(t, err)
}
