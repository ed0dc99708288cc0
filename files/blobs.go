package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcpgate/mcpgate"
)

// Blobs stores bytes under their SHA-256.
type Blobs interface {
	// Put streams r into the store and returns its hex SHA-256 and size.
	// More than max bytes is ETOOLARGE, and nothing of it is kept.
	Put(ctx context.Context, r io.Reader, max int64) (sum string, n int64, err error)
	// Open returns the blob with the given hex SHA-256; ENOTFOUND if none.
	Open(ctx context.Context, sum string) (io.ReadSeekCloser, error)
}

// Dir is a Blobs in a directory: each blob in a file named by its digest,
// under a subdirectory named by the digest's first two characters.
type Dir struct {
	// Path is the directory; it is created when needed.
	Path string
}

// Put writes r to a temporary file, checking size and hashing as it goes,
// then syncs it and renames it into place.
func (d Dir) Put(ctx context.Context, r io.Reader, max int64) (string, int64, error) {
	tmp, err := d.temp()
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	defer tmp.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, max+1))
	switch {
	case err != nil:
		return "", n, fmt.Errorf("write blob: %w", err)
	case n > max:
		return "", n, mcpgate.Errorf(mcpgate.ETOOLARGE, "the upload is larger than %d bytes", max)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return sum, n, d.commit(tmp, sum)
}

// temp makes a temporary file in the directory's tmp/.
func (d Dir) temp() (*os.File, error) {
	dir := filepath.Join(d.Path, "tmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make blob directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("make temporary blob: %w", err)
	}
	return f, nil
}

// commit syncs tmp and renames it to the blob's path, then syncs that
// directory so that the rename survives a crash.
func (d Dir) commit(tmp *os.File, sum string) error {
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close blob: %w", err)
	}
	path := d.path(sum)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("make blob directory: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("store blob: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir fsyncs a directory.
func syncDir(path string) error {
	dir, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open blob directory: %w", err)
	}
	defer dir.Close()
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("sync blob directory: %w", err)
	}
	return nil
}

// Open returns the blob with the given digest.
func (d Dir) Open(ctx context.Context, sum string) (io.ReadSeekCloser, error) {
	if !validSum(sum) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "blob %q not found", sum)
	}
	f, err := os.Open(d.path(sum))
	if os.IsNotExist(err) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "blob %q not found", sum)
	} else if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	return f, nil
}

// path is where the blob with digest sum lives.
func (d Dir) path(sum string) string {
	return filepath.Join(d.Path, sum[:2], sum)
}

// validSum reports whether sum is a lowercase hex SHA-256.
func validSum(sum string) bool {
	if len(sum) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(sum)
	return err == nil && sum == hexLower(sum)
}

// hexLower lowercases the hex letters of s.
func hexLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
