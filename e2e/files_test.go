package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/examples/csvagent/csvq"
)

// rawRequest sends a body (nil for none) with no key and returns the
// status and the reply.
func rawRequest(t *testing.T, method, url string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dirBytes is the size of every file under dir.
func dirBytes(t *testing.T, dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// TestFiles uploads and downloads a file through the real binary with plain
// HTTP requests, and checks that another user cannot see it and that an
// upload over the cap is refused without reaching the disk.
func TestFiles(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	_, alice, env := startWithUser(t, nil, "--max-upload-bytes", "1000")
	var p struct {
		FileID    string `json:"file_id"`
		UploadURL string `json:"upload_url"`
	}
	alice.mustDo("POST", "/files/presign-upload", map[string]any{"filename": "note.txt", "content_type": "text/plain", "size": 5}, http.StatusCreated, &p)
	if status, body := rawRequest(t, "PUT", p.UploadURL, strings.NewReader("hello")); status != http.StatusOK {
		t.Fatalf("upload: HTTP %d: %s", status, body)
	}
	if status, _ := rawRequest(t, "PUT", p.UploadURL, strings.NewReader("hello")); status != http.StatusConflict {
		t.Fatalf("second upload by the same URL: HTTP %d, want 409", status)
	}
	var meta struct {
		DownloadURL string `json:"download_url"`
	}
	alice.mustDo("GET", "/files/"+p.FileID, nil, http.StatusOK, &meta)
	if status, body := rawRequest(t, "GET", meta.DownloadURL, nil); status != http.StatusOK || body != "hello" {
		t.Fatalf("download: HTTP %d: %q", status, body)
	}

	runCLI(t, env, "user", "create", "bob")
	bob := &apiClient{t: t, base: alice.base, key: strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "bob", "--name", "e2e"))}
	bob.mustDo("GET", "/files/"+p.FileID, nil, http.StatusNotFound, nil)

	alice.mustDo("POST", "/files/presign-upload", map[string]any{"filename": "big", "size": 1001}, http.StatusRequestEntityTooLarge, nil)
	alice.mustDo("POST", "/files/presign-upload", map[string]any{"filename": "big", "size": 1000}, http.StatusCreated, &p)
	// A body that never ends, sent without a length: cut off after the cap.
	status, _ := rawRequest(t, "PUT", p.UploadURL, io.LimitReader(zeros{}, 8<<20))
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized upload: HTTP %d, want 413", status)
	}
	if n := dirBytes(t, filepath.Join(dataDir(env), "files")); n > 10000 {
		t.Fatalf("the files directory holds %d bytes after refusing an upload", n)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

// Read fills p with zeros.
func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// dataDir is the MCPGATE_DATA_DIR of env.
func dataDir(env []string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "MCPGATE_DATA_DIR="); ok {
			return v
		}
	}
	return ""
}

// TestAttachmentForeignFile: a tools/call handing another user's file is
// refused before the agent hears of it, with invalid_param naming the
// entry.
func TestAttachmentForeignFile(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	g := startAgentGateway(t, []agentSkill{{id: "echo", skill: "echo", timeout: "30s"}})
	runCLI(t, g.env, "user", "create", "bob")
	bob := &apiClient{t: t, base: g.URL + "/api/v1", key: strings.TrimSpace(runCLI(t, g.env, "key", "create", "--user", "bob", "--name", "e2e"))}
	var p struct {
		FileID    string `json:"file_id"`
		UploadURL string `json:"upload_url"`
	}
	bob.mustDo("POST", "/files/presign-upload", map[string]any{"filename": "b.txt", "size": 3}, http.StatusCreated, &p)
	if status, body := rawRequest(t, "PUT", p.UploadURL, strings.NewReader("bob")); status != http.StatusOK {
		t.Fatalf("upload: HTTP %d: %s", status, body)
	}
	o := g.call(t, "echo", agentCall{Name: "echo", Arguments: map[string]any{
		"message": "read it", "attachments": []map[string]any{{"file_id": p.FileID}}}})
	if o.Error == nil || o.Error.Data["reason"] != "invalid_param" || o.Error.Data["status"] != 400.0 ||
		!strings.Contains(o.Error.Message, "attachments[0].file_id") {
		t.Fatalf("a call with bob's file by alice: %+v", o)
	}
}

// uploadFile presigns and uploads data as the client's user with plain
// HTTP requests and returns the file's ID.
func uploadFile(t *testing.T, c *apiClient, name, contentType string, data []byte) string {
	t.Helper()
	var p struct {
		FileID    string `json:"file_id"`
		UploadURL string `json:"upload_url"`
	}
	c.mustDo("POST", "/files/presign-upload", map[string]any{"filename": name, "content_type": contentType, "size": len(data)}, http.StatusCreated, &p)
	if status, body := rawRequest(t, "PUT", p.UploadURL, bytes.NewReader(data)); status != http.StatusOK {
		t.Fatalf("upload: HTTP %d: %s", status, body)
	}
	return p.FileID
}

// TestAgentReadsAttachment: a file uploaded with plain HTTP requests and
// handed to an agent reaches the agent worker (testagent, on agentkit) as
// an attachment whose signed URL it reads; it answers the bytes' SHA-256.
func TestAgentReadsAttachment(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	g := startAgentGateway(t, []agentSkill{{id: "echo", skill: "echo", timeout: "30s"}})
	startAgentWorker(t, g, "./testagent", "echo", "-mode", "echo")
	alice := &apiClient{t: t, base: g.URL + "/api/v1", key: g.userKey}
	data := make([]byte, 300<<10)
	rand.Read(data)
	id := uploadFile(t, alice, "data.bin", "application/octet-stream", data)
	o := g.call(t, "echo", agentCall{Name: "echo", Arguments: map[string]any{
		"message": "hash it", "attachments": []map[string]any{{"file_id": id, "filename": "renamed.bin"}}}})
	want := fmt.Sprintf("echo: hash it\nrenamed.bin sha256 %x", sha256.Sum256(data))
	wantText(t, o, want)
}

// TestDemoAgentReadsAttachment: `serve --demo`'s orders agent answers a
// question about a CSV file handed to it as an attachment, which it reads
// through the signed URL, instead of its built-in table.
func TestDemoAgentReadsAttachment(t *testing.T) {
	g := startGateway(t, nil, "--demo", "--data-dir", t.TempDir())
	key := mustMatch(t, keyLine, waitFor(t, g.stdout.String, "Claude Desktop"))
	waitFor(t, g.stderr.String, "agentkit: inbox connected") // the demo's worker
	demo := &apiClient{t: t, base: g.URL + "/api/v1", key: key}
	id := uploadFile(t, demo, "orders.csv", "text/csv", []byte(ordersCSV))

	table, err := csvq.Load(strings.NewReader(ordersCSV), "orders.csv")
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := table.Parse("total amount by region")
	if err != nil {
		t.Fatal(err)
	}
	want, err := table.Run(q)
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, g.URL+"/demo/mcp", bearer(key))
	r := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"orders","arguments":{"message":"total amount by region","attachments":[{"file_id":%q}]}}}`, id))
	var res toolResult
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].Text != want.Text {
		t.Fatalf("orders with an attachment: %v, HTTP %d %s\nwant text %q", err, r.Status, r.Body, want.Text)
	}
}
