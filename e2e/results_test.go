package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
)

// bigText is n bytes of lines of random letters, the same on every run.
func bigText(n int) []byte {
	r := mrand.New(mrand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		if i%80 == 79 {
			b[i] = '\n'
		} else {
			b[i] = 'a' + byte(r.IntN(26))
		}
	}
	return b
}

// TestLargeResultAsResourceLink: a 30 MiB REST response, over the skill's
// 1 MiB response cap, comes back as its first part and a resource_link to
// a file of the caller's, read back whole both through resources/read on
// the same MCP session and by the signed download URL; the file is the
// caller's, so another user does not see it.
func TestLargeResultAsResourceLink(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	body := bigText(30 << 20)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(body)
	}))
	defer backend.Close()
	g, api, env := startWithUser(t, nil)
	api.mustDo("POST", "/agents", map[string]any{"id": "reports", "name": "Reports", "mcp_enabled": true}, http.StatusCreated, nil)
	api.mustDo("POST", "/agents/reports/skills", map[string]any{"name": "store", "base_url": backend.URL, "allow_private": true,
		"tools": []map[string]any{{"name": "export", "description": "Export everything.", "input_schema": map[string]any{"type": "object"},
			"request": map[string]any{"method": "GET", "path": "/export.txt"}}}}, http.StatusCreated, nil)

	s := openSession(t, g.URL+"/reports/mcp", bearer(api.key))
	r := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"export","arguments":{}}}`)
	var res struct {
		Content []struct {
			Type, Text, URI, Name, MimeType string
			Size                            int64
			Meta                            map[string]string `json:"_meta"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("tools/call: %v, HTTP %d %.500s", err, r.Status, r.Body)
	}
	text, link := res.Content[0], res.Content[1]
	if !bytes.HasPrefix(body, []byte(text.Text[:1<<20])) || !bytes.Contains([]byte(text.Text), []byte(link.URI)) {
		t.Errorf("the text block is not the first MiB and a note naming %s: %.200q", link.URI, text.Text[len(text.Text)-300:])
	}
	if link.Type != "resource_link" || link.Name != "export.txt" || link.MimeType != "text/plain; charset=utf-8" || link.Size != int64(len(body)) {
		t.Fatalf("link = %+v", link)
	}

	read := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":%q}}`, link.URI))
	var contents struct {
		Contents []struct{ URI, Text string } `json:"contents"`
	}
	if err := json.Unmarshal(read.Result, &contents); err != nil || len(contents.Contents) != 1 || contents.Contents[0].Text != string(body) {
		t.Fatalf("resources/read: %v, HTTP %d, %d contents, not the whole body", err, read.Status, len(contents.Contents))
	}
	status, got := rawRequest(t, "GET", link.Meta["mcpgate/download_url"], nil)
	if status != http.StatusOK || got != string(body) {
		t.Fatalf("download: HTTP %d, %d bytes, want the whole body", status, len(got))
	}

	runCLI(t, env, "user", "create", "bob")
	bobKey := runCLI(t, env, "key", "create", "--user", "bob", "--name", "e2e")
	bob := &apiClient{t: t, base: api.base, key: string(bytes.TrimSpace([]byte(bobKey)))}
	bob.mustDo("GET", "/files/"+link.URI[len("mcpgate://files/"):], nil, http.StatusNotFound, nil)
}
