package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/metrics"
)

// echoCallLine is the metrics line of one echo call on the shop agent.
const echoCallLine = `mcpgate_tool_calls_total{agent="shop",outcome="ok",tool="echo"} 1` + "\n"

// scrapeFor GETs the metrics at url with h until they hold line, for up
// to 10 s, and returns the last answer: a call's metrics are recorded
// just after its reply went out, so a scrape right after may come first.
func scrapeFor(t *testing.T, url string, h http.Header, line string) *reply {
	t.Helper()
	var r *reply
	eventually(t, "the metrics at "+url+" holding "+strings.TrimSpace(line), func() bool {
		r = send(t, http.MethodGet, url, h, "")
		return r.status != http.StatusOK || strings.Contains(r.body, line)
	})
	return r
}

// callEcho makes one echo call, so that the metrics name an agent and a
// tool.
func (g *testGateway) callEcho(t *testing.T, key string) {
	t.Helper()
	s := g.mustInitialize(t, "shop", bearer(key), "2025-11-25")
	s.call(t, "echo", `{"text":"hi"}`).check(t, want{status: http.StatusOK})
}

// TestMetricsNeedAnAdminOffLoopback checks that a gateway listening on a
// non-loopback address serves /metrics, which names every agent and tool,
// only to an administrator's user API key.
func TestMetricsNeedAnAdminOffLoopback(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t, "--addr", "0.0.0.0:0") // reached on 127.0.0.1 only
	_, admin := g.mustKey(t, "alice", "")
	_, user := g.mustKey(t, "bob", "")
	_, agentKey := g.mustKey(t, "alice", "shop")
	g.callEcho(t, admin)

	r := send(t, http.MethodGet, g.URL()+"/metrics", nil, "")
	if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") || strings.Contains(r.body, "shop") {
		t.Errorf("without a credential: HTTP %d, WWW-Authenticate %q, %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
	}
	for name, key := range map[string]string{"a user who is not an administrator": user, "an agent key": agentKey} {
		r := send(t, http.MethodGet, g.URL()+"/metrics", bearer(key), "")
		if r.status != http.StatusForbidden || !strings.Contains(r.body, "administrator") || strings.Contains(r.body, "mcpgate_tool_calls_total") {
			t.Errorf("%s: HTTP %d %s, want 403 naming administrators", name, r.status, r.body)
		}
	}
	r = scrapeFor(t, g.URL()+"/metrics", bearer(admin), echoCallLine)
	if r.status != http.StatusOK || !strings.Contains(r.body, echoCallLine) {
		t.Errorf("an administrator: HTTP %d, want 200 with %s", r.status, echoCallLine)
	}
}

// TestMetricsOpenOnLoopback checks that a gateway listening on a loopback
// address keeps /metrics open, as before.
func TestMetricsOpenOnLoopback(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t) // 127.0.0.1:0
	_, key := g.mustKey(t, "alice", "")
	g.callEcho(t, key)
	if r := scrapeFor(t, g.URL()+"/metrics", nil, echoCallLine); r.status != http.StatusOK || !strings.Contains(r.body, echoCallLine) {
		t.Errorf("HTTP %d, want 200 with %s", r.status, echoCallLine)
	}
}

// TestMetricsAddr checks that --metrics-addr serves /metrics there,
// unauthenticated, and no longer on the main listener, even to an
// administrator.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t, "--metrics-addr", "127.0.0.1:0")
	_, admin := g.mustKey(t, "alice", "")
	g.callEcho(t, admin)
	if r := send(t, http.MethodGet, g.URL()+"/metrics", bearer(admin), ""); r.status != http.StatusNotFound {
		t.Errorf("main listener: HTTP %d, want 404", r.status)
	}
	r := scrapeFor(t, "http://"+g.MetricsAddr()+"/metrics", nil, echoCallLine)
	if r.status != http.StatusOK || !strings.Contains(r.body, echoCallLine) {
		t.Errorf("metrics listener: HTTP %d, want 200 with %s", r.status, echoCallLine)
	}
	if r := send(t, http.MethodGet, "http://"+g.MetricsAddr()+"/shop/mcp", nil, ""); r.status != http.StatusNotFound {
		t.Errorf("metrics listener serves more than /metrics: /shop/mcp answered HTTP %d", r.status)
	}
}

// TestMetricsAddrFromEnv checks that MCPGATE_METRICS_ADDR sets
// --metrics-addr.
func TestMetricsAddrFromEnv(t *testing.T) {
	t.Parallel()
	env, _, _ := newTestEnv(map[string]string{"MCPGATE_METRICS_ADDR": "127.0.0.1:9464"})
	m := NewMain(env)
	if err := m.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if m.Config.MetricsAddr != "127.0.0.1:9464" {
		t.Errorf("MetricsAddr = %q, want 127.0.0.1:9464", m.Config.MetricsAddr)
	}
}

// TestOperatorGauges checks that a running gateway exports what operators
// alert on: the backend's time by skill, open sessions and SSE streams,
// and the agents' queue depths (each agent with unacknowledged messages).
func TestOperatorGauges(t *testing.T) {
	t.Parallel()
	g := mustStartGateway(t)
	_, key := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(key), "2025-06-18")
	s.call(t, "echo", `{"text":"hi"}`)
	body := send(t, http.MethodGet, g.URL()+"/metrics", nil, "").body
	for _, want := range []string{
		`mcpgate_backend_call_duration_seconds_count{agent="shop",kind="rest",outcome="ok",skill="api"} 1`,
		`mcpgate_mcp_sessions_open 1`,
		`mcpgate_sse_streams_open 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if _, ok := g.store.(metrics.QueueDepths); !ok {
		t.Errorf("the store %T does not count queue depths", g.store)
	}
}
