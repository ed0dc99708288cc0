package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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

// TestRelayedAttachments: a relayed MCP tool gets a file handed to the
// call as a resource_link block whose uri, a signed URL, the upstream
// downloads with a plain GET.
func TestRelayedAttachments(t *testing.T) {
	up := sdk.NewServer(&sdk.Implementation{Name: "files-upstream", Version: "1"}, nil)
	up.AddTool(&sdk.Tool{Name: "digest", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct {
			Attachments []struct {
				Type, URI, Name, MimeType string
				Size                      int64
				Meta                      map[string]string `json:"_meta"`
			}
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || len(args.Attachments) != 1 {
			return nil, fmt.Errorf("arguments %s: %v", req.Params.Arguments, err)
		}
		a := args.Attachments[0]
		resp, err := http.Get(a.URI)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		text := fmt.Sprintf("%s %s %s %d %s sha256 %x", a.Type, a.Name, a.MimeType, a.Size, a.Meta["mcpgate/file_id"], sha256.Sum256(b))
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	url := serveUpstream(t, up, func(*http.Request) {})
	g := mustStartMain(t, strings.ReplaceAll(relayConfig, "UPSTREAM", url))
	_, key := g.mustKey(t, "alice", "")
	var p struct {
		FileID    string `json:"file_id"`
		UploadURL string `json:"upload_url"`
	}
	r := g.api(t, "POST", "/api/v1/files/presign-upload", key, `{"filename":"a.txt","content_type":"text/plain","size":5}`, http.StatusCreated)
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatal(err)
	}
	if r := send(t, "PUT", p.UploadURL, nil, "hello"); r.status != http.StatusOK {
		t.Fatalf("upload: HTTP %d %s", r.status, r.body)
	}
	s := g.mustInitialize(t, "relay", bearer(key), "2025-11-25")
	eventually(t, "the upstream's tool listed", func() bool { return listsTool(t, s, "digest") })
	_, text := s.post(t, callBody(1, "digest", `{"attachments":[{"file_id":"`+p.FileID+`"}]}`, ""), nil).mustToolResult(t)
	want := fmt.Sprintf("resource_link a.txt text/plain 5 %s sha256 %x", p.FileID, sha256.Sum256([]byte("hello")))
	if text != want {
		t.Fatalf("the upstream answered %q, want %q", text, want)
	}
}
