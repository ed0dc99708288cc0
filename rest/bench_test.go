package rest

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// BenchmarkCallTool measures a GET with path, query and header templates
// against a local JSON server, over kept-alive connections.
func BenchmarkCallTool(b *testing.B) {
	srv := mustServe(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id": 42, "name": "octocat", "tags": ["a", "b"], "active": true}`)
	})
	backend := New(&Options{LookupEnv: testLookup(map[string]string{"TOKEN": "t0k"})})
	call := newCall(srv.URL, &mcpgate.Request{
		Path:    "/users/{user}/repos",
		Query:   map[string]string{"per_page": "{n}", "sort": "updated"},
		Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"},
	}, `{"user": "octocat", "n": 5}`)
	call.Tool.OutputSchema = []byte(`{"type":"object"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := backend.CallTool(ctx, call)
		if err != nil || res.IsError {
			b.Fatalf("CallTool = %+v, %v", res, err)
		}
	}
}

// BenchmarkBuildRequest measures building the request alone: templates,
// headers and body, without the network; from the arguments' JSON, and
// from the value the validate stage decoded (Call.Decoded).
func BenchmarkBuildRequest(b *testing.B) {
	backend := New(&Options{LookupEnv: testLookup(map[string]string{"TOKEN": "t0k"})})
	call := newCall("https://api.example.com/v1", &mcpgate.Request{
		Method:  "POST",
		Path:    "/users/{user}/repos",
		Query:   map[string]string{"per_page": "{n}", "sort": "updated"},
		Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"},
	}, `{"user": "octocat", "n": 5, "name": "hello", "private": false}`)
	ctx := context.Background()
	run := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := backend.newRequest(ctx, call.Skill, call); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("json", run)
	// decoded: the arguments as the validate stage hands them on.
	call.Decoded = decodeLikeValidate(b, string(call.Arguments))
	b.Run("decoded", run)
}
