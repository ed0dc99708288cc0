package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// attachmentsBackend answers POST /multipart with the SHA-256 of each file
// part and the note field, and POST /byurl with the SHA-256 of the bytes
// at each attachment's signed URL, which it downloads.
func attachmentsBackend() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /multipart", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "note=%s", r.FormValue("note"))
		for _, fh := range r.MultipartForm.File["file"] {
			f, _ := fh.Open()
			b, _ := io.ReadAll(f)
			fmt.Fprintf(w, " %s sha256 %x", fh.Filename, sha256.Sum256(b))
		}
	})
	mux.HandleFunc("POST /byurl", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Files []struct{ Filename, URL string }
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, f := range body.Files {
			resp, err := http.Get(f.URL)
			if err != nil {
				fmt.Fprintf(w, "%s: %v", f.Filename, err)
				continue
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Fprintf(w, "%s HTTP %d sha256 %x", f.Filename, resp.StatusCode, sha256.Sum256(data))
		}
	})
	return mux
}

// TestRESTAttachments: a REST tool gets a file handed to a call either as
// a file part of a multipart body or as its signed URL in a JSON body
// template, through the real binary.
func TestRESTAttachments(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	backend := httptest.NewServer(attachmentsBackend())
	defer backend.Close()
	g, api, _ := startWithUser(t, nil)
	api.mustDo("POST", "/agents", map[string]any{"id": "docs", "name": "Docs", "mcp_enabled": true}, http.StatusCreated, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"note": map[string]any{"type": "string"}, "attachments": map[string]any{"type": "array"}}}
	api.mustDo("POST", "/agents/docs/skills", map[string]any{"name": "store", "base_url": backend.URL, "allow_private": true,
		"tools": []map[string]any{
			{"name": "send_form", "description": "Send files as a form.", "input_schema": schema,
				"request": map[string]any{"method": "POST", "path": "/multipart", "body": "multipart"}},
			{"name": "send_links", "description": "Send links to files.", "input_schema": schema,
				"request": map[string]any{"method": "POST", "path": "/byurl", "body": map[string]any{"files": "{attachments}"}}},
		}}, http.StatusCreated, nil)
	data := make([]byte, 100<<10)
	rand.Read(data)
	id := uploadFile(t, api, "scan.pdf", "application/pdf", data)
	sum := fmt.Sprintf("%x", sha256.Sum256(data))

	s := openSession(t, g.URL+"/docs/mcp", bearer(api.key))
	for tool, want := range map[string]string{
		"send_form":  "note=hello scan.pdf sha256 " + sum,
		"send_links": "scan.pdf HTTP 200 sha256 " + sum,
	} {
		r := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":{"note":"hello","attachments":[{"file_id":%q}]}}}`, tool, id))
		var res toolResult
		if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, want) {
			t.Errorf("%s: %v, HTTP %d %s; want %q", tool, err, r.Status, r.Body, want)
		}
	}
}
