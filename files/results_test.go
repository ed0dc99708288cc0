package files_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/files"
	"github.com/mcpgate/mcpgate/sqlite"
)

// TestResults stores results as files of a user and reads them back: text
// as text, other bytes as base64; another user's file is not found, and a
// result over Max is refused.
func TestResults(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r := &files.Results{Files: store, Blobs: files.Dir{Path: t.TempDir()}, Signer: files.NewSigner(store, nil), PublicURL: "http://127.0.0.1:1", Max: 20}
	link, err := r.StoreResult(ctx, "u1", "out.json", "application/json", strings.NewReader(`{"a":"é"}`))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]string
	json.Unmarshal(link.Meta, &meta)
	if link.Type != "resource_link" || !strings.HasPrefix(link.URI, mcpgate.FileURIPrefix) || link.Size != 10 ||
		!strings.HasPrefix(meta["mcpgate/download_url"], "http://127.0.0.1:1/api/v1/files/") {
		t.Fatalf("link = %+v", link)
	}
	var got struct {
		Contents []struct{ URI, MimeType, Text, Blob string } `json:"contents"`
	}
	raw, err := r.ReadResource(ctx, "u1", link.URI)
	if err != nil || json.Unmarshal(raw, &got) != nil || len(got.Contents) != 1 || got.Contents[0].Text != `{"a":"é"}` {
		t.Fatalf("ReadResource = %s, %v", raw, err)
	}
	bin, err := r.StoreResult(ctx, "u1", "x.bin", "application/octet-stream", strings.NewReader("\x00\x01"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = r.ReadResource(ctx, "u1", bin.URI)
	if json.Unmarshal(raw, &got) != nil || got.Contents[0].Blob != base64.StdEncoding.EncodeToString([]byte("\x00\x01")) {
		t.Fatalf("binary ReadResource = %s", raw)
	}
	if _, err := r.ReadResource(ctx, "u2", link.URI); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Fatalf("another user's file: %v, want not found", err)
	}
	if _, err := r.StoreResult(ctx, "u1", "big", "text/plain", strings.NewReader(strings.Repeat("x", 21))); mcpgate.ErrorCode(err) != mcpgate.ETOOLARGE {
		t.Fatalf("a result over Max: %v, want too large", err)
	}
}
