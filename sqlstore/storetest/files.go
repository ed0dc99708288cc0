package storetest

import (
	"context"
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
