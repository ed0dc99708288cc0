package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestObserveCall(t *testing.T) {
	m := New()
	m.ObserveCall("a1", "echo", "ok", 3*time.Millisecond)
	m.ObserveCall("a1", "echo", "ok", 7*time.Millisecond)
	m.ObserveCall("a1", "(unknown)", "not_found", 0)
	m.ObserveCall("a2", "echo", "timeout", 70*time.Second)
	body := mustScrape(t, m)
	for _, want := range []string{
		`mcpgate_tool_calls_total{agent="a1",outcome="ok",tool="echo"} 2`,
		`mcpgate_tool_calls_total{agent="a1",outcome="not_found",tool="(unknown)"} 1`,
		`mcpgate_tool_calls_total{agent="a2",outcome="timeout",tool="echo"} 1`,
		`mcpgate_tool_call_duration_seconds_count{agent="a1",tool="echo"} 2`,
		`mcpgate_tool_call_duration_seconds_sum{agent="a1",tool="echo"} 0.01`,
		`mcpgate_tool_call_duration_seconds_bucket{agent="a1",tool="echo",le="0.0025"} 0`,
		`mcpgate_tool_call_duration_seconds_bucket{agent="a1",tool="echo",le="0.005"} 1`,
		`mcpgate_tool_call_duration_seconds_bucket{agent="a1",tool="echo",le="0.01"} 2`,
		`mcpgate_tool_call_duration_seconds_bucket{agent="a2",tool="echo",le="60"} 0`,
		`mcpgate_tool_call_duration_seconds_bucket{agent="a2",tool="echo",le="+Inf"} 1`,
		`# HELP mcpgate_tool_calls_total Tool calls, by agent, tool and outcome (ok, tool_error, or an error reason).`,
	} {
		mustHaveLine(t, body, want)
	}
}

func TestObserveBackend(t *testing.T) {
	m := New()
	m.ObserveBackend("shop", "crm", "mcp", "ok", 2*time.Millisecond)
	m.ObserveBackend("shop", "crm", "mcp", "ok", 3*time.Millisecond)
	m.ObserveBackend("shop", "crm", "mcp", "timeout", time.Second)
	m.ObserveBackend("shop", "mail", "rest", "ok", time.Millisecond)
	body := mustScrape(t, m)
	for _, want := range []string{
		`mcpgate_backend_call_duration_seconds_count{agent="shop",kind="mcp",outcome="ok",skill="crm"} 2`,
		`mcpgate_backend_call_duration_seconds_sum{agent="shop",kind="mcp",outcome="ok",skill="crm"} 0.005`,
		`mcpgate_backend_call_duration_seconds_count{agent="shop",kind="mcp",outcome="timeout",skill="crm"} 1`,
		`mcpgate_backend_call_duration_seconds_count{agent="shop",kind="rest",outcome="ok",skill="mail"} 1`,
	} {
		mustHaveLine(t, body, want)
	}
}

func TestObserveRequest(t *testing.T) {
	m := New()
	for _, code := range []int{200, 200, 202, 400, 401, 404, 418, 503, 0} {
		m.ObserveRequest("/{agent}/mcp", code, time.Millisecond)
	}
	m.ObserveRequest("/healthz", 200, 0)
	body := mustScrape(t, m)
	for _, want := range []string{
		`mcpgate_http_requests_total{code="200",route="/{agent}/mcp"} 2`,
		`mcpgate_http_requests_total{code="202",route="/{agent}/mcp"} 1`,
		`mcpgate_http_requests_total{code="400",route="/{agent}/mcp"} 1`,
		`mcpgate_http_requests_total{code="401",route="/{agent}/mcp"} 1`,
		`mcpgate_http_requests_total{code="404",route="/{agent}/mcp"} 1`,
		`mcpgate_http_requests_total{code="418",route="/{agent}/mcp"} 1`,
		`mcpgate_http_requests_total{code="503",route="/{agent}/mcp"} 1`,
		`mcpgate_http_requests_total{code="0",route="/{agent}/mcp"} 1`,
		`mcpgate_http_requests_total{code="200",route="/healthz"} 1`,
		`mcpgate_http_request_duration_seconds_count{route="/{agent}/mcp"} 9`,
		`mcpgate_http_request_duration_seconds_count{route="/healthz"} 1`,
	} {
		mustHaveLine(t, body, want)
	}
}

func TestRuntimeCollectors(t *testing.T) {
	body := mustScrape(t, New())
	for _, name := range []string{"go_goroutines ", "go_memstats_alloc_bytes "} {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("scrape lacks %s", name)
		}
	}
}

// TestRegistriesAreSeparate checks that metrics live in their own registry
// rather than a global one: two instances neither collide nor share values.
func TestRegistriesAreSeparate(t *testing.T) {
	a, b := New(), New()
	a.ObserveCall("a1", "echo", "ok", time.Millisecond)
	mustHaveLine(t, mustScrape(t, a), `mcpgate_tool_calls_total{agent="a1",outcome="ok",tool="echo"} 1`)
	if body := mustScrape(t, b); strings.Contains(body, "mcpgate_tool_calls_total{") {
		t.Errorf("second instance shows the first one's calls:\n%s", body)
	}
}

func TestStatusText(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{200, "200"}, {202, "202"}, {400, "400"}, {401, "401"}, {404, "404"},
		{204, "204"}, {302, "302"}, {429, "429"}, {500, "500"}, {599, "599"},
		{7, "7"}, {10, "10"}, {99999999, "99999999"}, {0, "0"}, {-1, "0"},
	}
	for _, tt := range tests {
		if got := statusText(tt.code); got != tt.want {
			t.Errorf("statusText(%d) = %q, want %q", tt.code, got, tt.want)
		}
	}
}

// mustScrape fetches the metrics page over HTTP.
func mustScrape(tb testing.TB, m *Metrics) string {
	tb.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		tb.Fatalf("scrape: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return string(body)
}

// mustHaveLine fails the test unless body has the exact line.
func mustHaveLine(tb testing.TB, body, line string) {
	tb.Helper()
	for l := range strings.Lines(body) {
		if strings.TrimSuffix(l, "\n") == line {
			return
		}
	}
	tb.Errorf("scrape lacks the line\n%s", line)
}
