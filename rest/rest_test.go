package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// mustServe starts a server on 127.0.0.1 that runs h, closed at the end of
// the test.
func mustServe(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// newCall returns a call of a tool with request req on a skill based at
// baseURL that may reach private addresses.
func newCall(baseURL string, req *mcpgate.Request, arguments string) *mcpgate.Call {
	return &mcpgate.Call{
		Skill:     &mcpgate.Skill{Name: "test", Kind: mcpgate.SkillREST, BaseURL: baseURL, AllowPrivate: true},
		Tool:      &mcpgate.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Request: req},
		ToolName:  "t",
		Arguments: json.RawMessage(arguments),
		Notifier:  mcpgate.NopNotifier{},
	}
}

// mustCall runs the call and fails the test on an error.
func mustCall(tb testing.TB, b *Backend, call *mcpgate.Call) *mcpgate.Result {
	tb.Helper()
	res, err := b.CallTool(context.Background(), call)
	if err != nil {
		tb.Fatalf("CallTool: %v", err)
	}
	return res
}

// resultText returns the text of a result's blocks.
func resultText(res *mcpgate.Result) string {
	var sb strings.Builder
	for _, c := range res.Content {
		sb.WriteString(c.Text)
	}
	return sb.String()
}

// received is what a test server saw of a request.
type received struct {
	Method, URI string
	Header      map[string]string
	Body        string
}

// recorder returns a handler that records requests to got and answers
// {"ok":true}; it records the headers named in headers.
func recorder(got *received, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		*got = received{Method: r.Method, URI: r.RequestURI, Body: string(body), Header: map[string]string{}}
		for _, h := range headers {
			if v := r.Header.Get(h); v != "" {
				got.Header[h] = v
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}
}

func TestCallToolRequest(t *testing.T) {
	headers := []string{"Authorization", "Content-Type", "User-Agent", "Accept", "X-Trace"}
	tests := []struct {
		name string
		req  mcpgate.Request
		args string
		want received
	}{
		{"get with path and query", mcpgate.Request{Path: "/users/{id}/repos", Query: map[string]string{"sort": "{sort}", "per_page": "{n}", "type": "{type}"}},
			`{"id": "a b/c", "sort": "updated", "n": 5}`,
			received{Method: "GET", URI: "/api/users/a%20b%2Fc/repos?per_page=5&sort=updated", Header: map[string]string{
				"Authorization": "Bearer s3cr3t", "User-Agent": "mcpgate-test", "Accept": "application/json, */*;q=0.8"}}},
		{"post all", mcpgate.Request{Method: "post", Path: "/items/{id}", Headers: map[string]string{"X-Trace": "t-{trace}"}},
			`{"id": 3, "trace": "abc", "name": "n", "tags": ["x"]}`,
			received{Method: "POST", URI: "/api/items/3", Body: `{"name":"n","tags":["x"]}`, Header: map[string]string{
				"Authorization": "Bearer s3cr3t", "User-Agent": "mcpgate-test", "Accept": "application/json, */*;q=0.8",
				"Content-Type": "application/json", "X-Trace": "t-abc"}}},
		{"tool headers override", mcpgate.Request{Method: "DELETE", Path: "/items/1", Headers: map[string]string{
			"authorization": "Token {tok}", "User-Agent": "custom", "Accept": "text/csv"}},
			`{"tok": "t"}`,
			received{Method: "DELETE", URI: "/api/items/1", Header: map[string]string{
				"Authorization": "Token t", "User-Agent": "custom", "Accept": "text/csv"}}},
		{"template body", mcpgate.Request{Method: "PUT", Path: "/q", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: json.RawMessage(`{"query": "{q}", "limit": "{n}"}`)}},
			`{"q": "cats", "n": 10}`,
			received{Method: "PUT", URI: "/api/q", Body: `{"query":"cats","limit":10}`, Header: map[string]string{
				"Authorization": "Bearer s3cr3t", "User-Agent": "mcpgate-test", "Accept": "application/json, */*;q=0.8",
				"Content-Type": "application/json"}}},
	}
	b := New(&Options{UserAgent: "mcpgate-test", LookupEnv: testLookup(map[string]string{"TOKEN": "s3cr3t"})})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got received
			srv := mustServe(t, recorder(&got, headers...))
			call := newCall(srv.URL+"/api/", &tt.req, tt.args)
			call.Skill.Headers = map[string]string{"Authorization": "Bearer ${env:TOKEN}"}
			if res := mustCall(t, b, call); res.IsError {
				t.Fatalf("result is an error: %s", resultText(res))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallToolInvalidRequest(t *testing.T) {
	srv := mustServe(t, func(http.ResponseWriter, *http.Request) { t.Error("the server got a request") })
	tests := []struct {
		name string
		base string
		req  *mcpgate.Request
		args string
		want string
	}{
		{"no request", srv.URL, nil, `{}`, "has no request"},
		{"arguments not an object", srv.URL, &mcpgate.Request{Path: "/"}, `[1]`, "must be a JSON object"},
		{"missing path argument", srv.URL, &mcpgate.Request{Path: "/{id}"}, `{}`, `argument "id" is required`},
		{"line break in header", srv.URL, &mcpgate.Request{Path: "/", Headers: map[string]string{"X-A": "{a}"}}, `{"a": "x\ny"}`, "line break"},
		{"bad method", srv.URL, &mcpgate.Request{Method: "GE T", Path: "/"}, `{}`, `method "GE T"`},
		{"bad scheme", "ftp://127.0.0.1/x?key=secret", &mcpgate.Request{Path: "/"}, `{}`, "ftp://127.0.0.1/x/ is not a valid http or https URL"},
		{"bad url", "http://bad host/?key=secret", &mcpgate.Request{Path: "/"}, `{}`, "is not a valid http or https URL"},
	}
	b := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustCall(t, b, newCall(tt.base, tt.req, tt.args))
			if text := resultText(res); !res.IsError || !strings.Contains(text, tt.want) || strings.Contains(text, "secret") {
				t.Errorf("result = %+v, want an error containing %q and no secret", res, tt.want)
			}
		})
	}
}

// TestReadLimitedPreallocation checks that a response's Content-Length,
// which the backend may state wrongly, does not decide how much memory is
// set aside before the body arrives.
func TestReadLimitedPreallocation(t *testing.T) {
	const limit = 64 << 20
	resp := &http.Response{ContentLength: limit, Body: io.NopCloser(strings.NewReader("short"))}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	body, truncated, err := readLimited(resp, limit)
	runtime.ReadMemStats(&after)
	if string(body) != "short" || truncated || err != nil {
		t.Fatalf("readLimited = %q, %v, %v", body, truncated, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("reading a 5-byte body that claims %d bytes allocated %d bytes", limit, n)
	}
}
