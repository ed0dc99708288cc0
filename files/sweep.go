package files

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Sweep defaults: how long a ready file is kept, how many files one
// statement deletes, and how long a blob or temporary file must have been
// left alone before the sweep removes it.
const (
	DefaultRetention  = 7 * 24 * time.Hour
	DefaultSweepBatch = 500
	blobGrace         = time.Hour
)

// SweepStore deletes due files' rows (mcpgate.FileStore).
type SweepStore interface {
	SweepFiles(ctx context.Context, now, readyBefore time.Time, limit int) ([]*mcpgate.File, error)
	FileBlobInUse(ctx context.Context, sum string) (bool, error)
}

// BlobRemover removes blobs no file needs (Dir).
type BlobRemover interface {
	// Remove deletes the blob with the given digest unless it was written
	// at or after before; a missing blob is no error.
	Remove(ctx context.Context, sum string, before time.Time) error
	// RemoveTemp deletes temporary files last written before before: the
	// leftovers of uploads cut off by a crash.
	RemoveTemp(ctx context.Context, before time.Time) error
}

// Sweeper deletes expired upload reservations, uploads never completed
// and files past the retention, with their blobs once no file shares them.
type Sweeper struct {
	Files SweepStore
	Blobs BlobRemover
	// Retention is how long a ready file is kept (default
	// DefaultRetention).
	Retention time.Duration
	// Batch is how many files one statement deletes (default
	// DefaultSweepBatch).
	Batch int
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Sweep deletes every due file, a batch at a time, and returns how many.
// A blob is removed only when no file row has its digest and it was not
// written within the last hour, so that an upload of the same bytes
// finishing meanwhile keeps it.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	now := s.now()
	retention, batch := s.Retention, s.Batch
	if retention <= 0 {
		retention = DefaultRetention
	}
	if batch <= 0 {
		batch = DefaultSweepBatch
	}
	total := 0
	for ctx.Err() == nil {
		due, err := s.Files.SweepFiles(ctx, now, now.Add(-retention), batch)
		if err != nil {
			return total, err
		}
		total += len(due)
		if err := s.removeBlobs(ctx, due, now.Add(-blobGrace)); err != nil {
			return total, err
		}
		if len(due) < batch {
			break
		}
	}
	return total, s.Blobs.RemoveTemp(ctx, now.Add(-24*time.Hour))
}

// removeBlobs removes the blobs of swept files that no file row has.
func (s *Sweeper) removeBlobs(ctx context.Context, swept []*mcpgate.File, before time.Time) error {
	seen := map[string]bool{}
	for _, f := range swept {
		if f.SHA256 == "" || seen[f.SHA256] {
			continue
		}
		seen[f.SHA256] = true
		used, err := s.Files.FileBlobInUse(ctx, f.SHA256)
		if err != nil {
			return err
		}
		if !used {
			if err := s.Blobs.Remove(ctx, f.SHA256, before); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run sweeps at start and then every interval until ctx ends, logging
// what it removed and what failed.
func (s *Sweeper) Run(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		n, err := s.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			s.logger().Warn("file sweep failed", "err", err)
		}
		if n > 0 {
			s.logger().Info("expired files removed", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *Sweeper) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sweeper) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Remove deletes a blob not written since before.
func (d Dir) Remove(ctx context.Context, sum string, before time.Time) error {
	if !validSum(sum) {
		return nil
	}
	return removeIfOlder(d.path(sum), before)
}

// RemoveTemp deletes the temporary files in tmp/ last written before
// before.
func (d Dir) RemoveTemp(ctx context.Context, before time.Time) error {
	dir := filepath.Join(d.Path, "tmp")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("list temporary blobs: %w", err)
	}
	for _, e := range entries {
		if err := removeIfOlder(filepath.Join(dir, e.Name()), before); err != nil {
			return err
		}
	}
	return nil
}

// removeIfOlder deletes the file at path when it was last written before
// before; a missing file is no error.
func removeIfOlder(path string, before time.Time) error {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("stat blob: %w", err)
	}
	if !info.ModTime().Before(before) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove blob: %w", err)
	}
	return nil
}
