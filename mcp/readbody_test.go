package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadBodyLimit checks the body limit both ways a client may send a
// body: with a Content-Length (refused before reading when too long) and
// chunked, without one (refused while reading).
func TestReadBodyLimit(t *testing.T) {
	h := mustHarness(t, &Options{MaxBodyBytes: 200})
	sid := h.mustInit(t, "2025-11-25", nil)
	small := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 300) + `"}}`
	for _, tt := range []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"small with length", small, false, 200},
		{"small chunked", small, true, 200},
		{"big with length", big, false, 413},
		{"big chunked", big, true, 413},
	} {
		var body io.Reader = strings.NewReader(tt.body)
		if tt.chunked {
			body = io.MultiReader(body) // no known length: sent chunked
		}
		r, _ := http.NewRequest(http.MethodPost, h.url, body)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}
}

// TestReadBodyAllocs checks that a body of known length is read into one
// buffer, without a MaxBytesReader: net/http reads no more than the
// Content-Length, which was checked against the limit.
func TestReadBodyAllocs(t *testing.T) {
	s := mustHarness(t, &Options{MaxBodyBytes: 1 << 20}).srv
	body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	r := httptest.NewRequest(http.MethodPost, "/a1/mcp", body)
	w := httptest.NewRecorder()
	n := testing.AllocsPerRun(100, func() {
		body.Seek(0, io.SeekStart)
		if _, err := s.readBody(w, r); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("readBody: %v allocations, want 1", n)
	}
}
