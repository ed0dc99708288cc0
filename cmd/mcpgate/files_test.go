package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// TestFileSweepWiring: the gateway's file sweeper works on its store and
// its blob directory with --file-retention: a file uploaded through the
// API is deleted once older than the retention.
func TestFileSweepWiring(t *testing.T) {
	g := mustStartGateway(t, "--file-retention", "1ms")
	_, oag := g.mustKey(t, "alice", "")
	var p struct {
		FileID    string `json:"file_id"`
		UploadURL string `json:"upload_url"`
	}
	r := g.api(t, "POST", "/api/v1/files/presign-upload", oag, `{"filename":"a.txt","size":5}`, http.StatusCreated)
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatal(err)
	}
	if r := send(t, "PUT", p.UploadURL, nil, "hello"); r.status != http.StatusOK {
		t.Fatalf("upload: HTTP %d %s", r.status, r.body)
	}
	n, err := g.fileSweeper().Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want the uploaded file", n, err)
	}
	g.api(t, "GET", "/api/v1/files/"+p.FileID, oag, "", http.StatusNotFound)
}
