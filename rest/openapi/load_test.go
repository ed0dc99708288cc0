package openapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// TestLoadFile reads a document from a file, and refuses missing and
// oversized ones.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	big := filepath.Join(dir, "big.yaml")
	mustWrite(t, small, []byte("openapi: 3.0.0\n"))
	mustWrite(t, big, bytes.Repeat([]byte("#"), maxDocumentBytes+1))
	data, err := Load(context.Background(), small, false)
	if err != nil || string(data) != "openapi: 3.0.0\n" {
		t.Fatalf("Load = %q, %v", data, err)
	}
	_, err = Load(context.Background(), filepath.Join(dir, "missing.yaml"), false)
	mustErrorContain(t, err, mcpgate.EINVALID, "cannot read the document")
	_, err = Load(context.Background(), big, false)
	mustErrorContain(t, err, mcpgate.EINVALID, "larger than 10 MiB")
	_, err = Load(context.Background(), "ftp://example.com/openapi.yaml", false)
	mustErrorContain(t, err, mcpgate.EINVALID, "only file paths and http(s) URLs")
}

// TestLoadURL fetches a document from a local server, which only
// allowPrivate lets through, and imports it with relative servers.
func TestLoadURL(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("testdata", "petstore.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /specs/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Replace(spec, []byte("https://petstore3.swagger.io/api/v3"), []byte("/api/v3"), 1))
	})
	mux.HandleFunc("GET /big.yaml", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, io.LimitReader(zeros{}, maxDocumentBytes+10))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	source := srv.URL + "/specs/openapi.yaml"

	t.Run("refused without allowPrivate", func(t *testing.T) {
		_, err := Load(context.Background(), source, false)
		mustErrorContain(t, err, mcpgate.EINVALID, "cannot fetch the document")
	})
	t.Run("fetched with allowPrivate", func(t *testing.T) {
		data, err := Load(context.Background(), source, true)
		if err != nil {
			t.Fatal(err)
		}
		res := mustImport(t, string(data), &Options{Skill: "petstore", SourceURL: source})
		if want := srv.URL + "/api/v3"; res.BaseURL != want {
			t.Errorf("BaseURL = %q, want %q", res.BaseURL, want)
		}
	})
	t.Run("not found", func(t *testing.T) {
		_, err := Load(context.Background(), srv.URL+"/nothing", true)
		mustErrorContain(t, err, mcpgate.EINVALID, "the server answered 404 Not Found")
	})
	t.Run("too large", func(t *testing.T) {
		_, err := Load(context.Background(), srv.URL+"/big.yaml", true)
		mustErrorContain(t, err, mcpgate.EINVALID, "larger than 10 MiB")
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Load(ctx, source, true)
		mustErrorContain(t, err, mcpgate.EINVALID, "cannot fetch the document")
	})
}

// zeros is an endless reader of '0' bytes.
type zeros struct{}

// Read fills p with '0'.
func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// mustWrite writes a file or fails the test.
func mustWrite(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}
