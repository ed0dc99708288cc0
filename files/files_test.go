package files_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/files"
	"github.com/mcpgate/mcpgate/sqlite"
)

func TestDirPutOpen(t *testing.T) {
	ctx := context.Background()
	d := files.Dir{Path: t.TempDir()}
	sum, n, err := d.Put(ctx, strings.NewReader("hello"), 5)
	if err != nil || n != 5 || sum != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("Put = %q, %d, %v", sum, n, err)
	}
	r, err := d.Open(ctx, sum)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, _ := io.ReadAll(r); string(b) != "hello" {
		t.Fatalf("read back %q", b)
	}
	if _, err := d.Open(ctx, "../../etc/passwd"); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Fatalf("Open of a path: %v, want not found", err)
	}
}

// TestDirPutTooLarge: more than max bytes is refused, and neither the blob
// nor its temporary file stays.
func TestDirPutTooLarge(t *testing.T) {
	dir := t.TempDir()
	d := files.Dir{Path: dir}
	_, _, err := d.Put(context.Background(), bytes.NewReader(make([]byte, 1000)), 999)
	if mcpgate.ErrorCode(err) != mcpgate.ETOOLARGE {
		t.Fatalf("Put of 1000 bytes with max 999: %v, want too large", err)
	}
	left, _ := os.ReadDir(filepath.Join(dir, "tmp"))
	all, _ := os.ReadDir(dir)
	if len(left) != 0 || len(all) != 1 {
		t.Fatalf("left behind: %d temporary files, %d entries", len(left), len(all))
	}
}

// newSigner returns a Signer over a real SQLite store and a settable clock.
func newSigner(t *testing.T) (*files.Signer, *time.Time) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	now := time.Now()
	return files.NewSigner(s, func() time.Time { return now }), &now
}

func TestSignVerify(t *testing.T) {
	ctx := context.Background()
	s, now := newSigner(t)
	tok, exp, err := s.Sign(ctx, files.OpDownload, "file_1", time.Minute)
	if err != nil || !exp.After(*now) {
		t.Fatalf("Sign: %v, expires %v", err, exp)
	}
	got, err := s.Verify(ctx, tok, files.OpDownload)
	if err != nil || got != "file_1" {
		t.Fatalf("Verify = %+v, %v", got, err)
	}
	for name, bad := range map[string]string{
		"other op":  strings.Replace(tok, "get.", "put.", 1),
		"other id":  strings.Replace(tok, "file_1", "file_2", 1),
		"other mac": tok[:len(tok)-1] + map[bool]string{true: "1", false: "0"}[strings.HasSuffix(tok, "0")],
		"empty":     "",
	} {
		if _, err := s.Verify(ctx, bad, files.OpDownload); mcpgate.ErrorCode(err) != mcpgate.EFORBIDDEN {
			t.Errorf("%s: %v, want forbidden", name, err)
		}
	}
	if _, err := s.Verify(ctx, tok, files.OpUpload); mcpgate.ErrorCode(err) != mcpgate.EFORBIDDEN {
		t.Errorf("download token as upload: %v, want forbidden", err)
	}
	*now = now.Add(time.Minute)
	if _, err := s.Verify(ctx, tok, files.OpDownload); mcpgate.ErrorCode(err) != mcpgate.EFORBIDDEN {
		t.Errorf("expired: %v, want forbidden", err)
	}
}

// FuzzParseToken: any string parses or is refused as forbidden, without
// panicking, and a parsed token's fields are what the string held.
func FuzzParseToken(f *testing.F) {
	f.Add("get.file_1.1700000000.sk_1." + strings.Repeat("ab", 32))
	f.Add("put....")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := files.ParseToken(s)
		if err != nil {
			if mcpgate.ErrorCode(err) != mcpgate.EFORBIDDEN {
				t.Fatalf("error %v is not forbidden", err)
			}
			return
		}
		if !strings.HasPrefix(s, tok.Op+"."+tok.FileID+".") || len(tok.MAC) != 32 {
			t.Fatalf("token %+v from %q", tok, s)
		}
	})
}
