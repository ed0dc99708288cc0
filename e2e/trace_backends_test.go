package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// traceUpstream is an upstream MCP server on 127.0.0.1 that records the
// trace context of each tools/call: its traceparent header, and its
// params._meta.traceparent.
type traceUpstream struct {
	mu           sync.Mutex
	header, meta []string
}

// serve starts the server and returns its URL.
func (u *traceUpstream) serve(t *testing.T) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "traced", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		u.mu.Lock()
		u.meta = append(u.meta, tp)
		u.mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			u.mu.Lock()
			u.header = append(u.header, r.Header.Get("traceparent"))
			u.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// received returns what the upstream received, once for one call.
func (u *traceUpstream) received(t *testing.T) (header, meta string) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.header) != 1 || len(u.meta) != 1 {
		t.Fatalf("the upstream got %d tools/call requests and %d calls, want 1", len(u.header), len(u.meta))
	}
	return u.header[0], u.meta[0]
}

const backendsTraceConfig = `users:
  - name: alice
agents:
  - id: shop
    owner: alice
    mcp_enabled: true
    skills:
      - name: stock
        kind: rest
        base_url: BASE
        allow_private: true
        tools:
          - name: count
            input_schema: {type: object, properties: {item: {type: string}}}
            request: {method: POST, path: /count, body: all}
      - name: search
        kind: mcp
        url: UPSTREAM
        allow_private: true
        prefix: search_
      - name: analyst
        kind: agent
        timeout: 30s
`

// traceLine is what testagent prints for a chat message with a trace.
var traceLine = regexp.MustCompile(`trace msg_\S+ (\S+)`)

// TestTraceAcrossBackends sends three tools/calls under one host trace:
// through a REST tool, a relayed upstream MCP tool and an agent. The
// exported trace holds each call's span under the host's, the pipeline's
// stage spans under each call's, and a backend span under the dispatch,
// whose W3C context the backend received: the REST API and the upstream
// as headers (the upstream in params._meta too), the agent worker in its
// chat_message.
func TestTraceAcrossBackends(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	recv, api, up := &otlpReceiver{}, &traceAPI{}, &traceUpstream{}
	collectorSrv, backend := httptest.NewServer(recv), httptest.NewServer(api)
	t.Cleanup(collectorSrv.Close)
	t.Cleanup(backend.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	body := strings.NewReplacer("BASE", backend.URL, "UPSTREAM", up.serve(t)).Replace(backendsTraceConfig)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(dir, "data"), "OTEL_EXPORTER_OTLP_ENDPOINT=" + collectorSrv.URL, "OTEL_BSP_SCHEDULE_DELAY=50"}
	g := startGateway(t, env, "--config", cfg, "--log-format", "json")
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	worker := startAgentWorker(t, &agentGateway{gateway: g, env: env, userKey: key, dir: dir}, "./testagent", "shop", "-mode", "echo")
	url := g.URL + "/shop/mcp"
	eventuallyWithin(t, 60*time.Second, func() bool {
		return slices.Contains(openSession(t, url, bearer(key)).toolNames(), "search_ping")
	})

	s := openSession(t, url, map[string]string{"Authorization": "Bearer " + key, "traceparent": "00-" + headerTrace + "-" + hostSpan + "-01"})
	for i, call := range []string{
		`"name":"count","arguments":{"item":"sesame-4711"}`,
		`"name":"search_ping","arguments":{}`,
		`"name":"analyst","arguments":{"message":"sesame-4711"}`,
	} {
		if r := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, i+10, call)); r.Error != nil || strings.Contains(r.Body, `"isError":true`) {
			t.Fatalf("tools/call %s: %s", call, r.Body)
		}
	}
	worker.cmd.Process.Signal(os.Interrupt)
	g.stop() // flushes the spans

	backends := checkCallSpans(t, recv.trace(headerTrace))
	if attr(backends["rest"], "http.request.method") != "POST" || attr(backends["mcp"], "mcp.method.name") != "tools/call" ||
		attr(backends["rest"], "server.address") != "127.0.0.1" || attr(backends["mcp"], "server.address") != "127.0.0.1" {
		t.Errorf("backend span attributes: rest %v, mcp %v", backends["rest"].Attributes, backends["mcp"].Attributes)
	}
	api.mu.Lock()
	restGot := api.parent
	api.mu.Unlock()
	upHeader, upMeta := up.received(t)
	agentGot := traceLine.FindStringSubmatch(worker.out.String())
	if agentGot == nil {
		t.Fatalf("the agent printed no traceparent:\n%s", worker.out.String())
	}
	for _, c := range []struct{ who, kind, got string }{
		{"the REST API", "rest", strings.Join(restGot, ",")},
		{"the upstream (header)", "mcp", upHeader},
		{"the upstream (_meta)", "mcp", upMeta},
		{"the agent worker", "agent", agentGot[1]},
	} {
		want := "00-" + headerTrace + "-" + hex.EncodeToString(backends[c.kind].SpanId) + "-01"
		if c.got != want {
			t.Errorf("%s received traceparent %q, want %q (the backend %s span)", c.who, c.got, want, c.kind)
		}
	}
}

// checkCallSpans checks the trace of the three calls: each tools/call span
// a child of the host's, with the stage spans as its children and the
// backend span under the dispatch, and no argument value anywhere. It
// returns the backend spans by kind.
func checkCallSpans(t *testing.T, spans []*tracepb.Span) map[string]*tracepb.Span {
	t.Helper()
	children := map[string][]*tracepb.Span{}
	for _, s := range spans {
		children[string(s.ParentSpanId)] = append(children[string(s.ParentSpanId)], s)
		if strings.Contains(fmt.Sprint(s.Attributes), "sesame") {
			t.Errorf("span %s holds an argument value: %v", s.Name, s.Attributes)
		}
	}
	host, _ := hex.DecodeString(hostSpan)
	backends := map[string]*tracepb.Span{}
	calls := children[string(host)]
	if len(calls) != 3 {
		t.Fatalf("the host span has children %v, want three tools/call spans; trace: %v", names(calls), names(spans))
	}
	for _, call := range calls {
		tool := attr(call, "gen_ai.tool.name")
		stages := children[string(call.SpanId)]
		want := []string{"mcpgate.dispatch", "mcpgate.rate_limit", "mcpgate.record", "mcpgate.validate"}
		if call.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("span %s of tool %s is of kind %v, want server", call.Name, tool, call.Kind)
		}
		if got := slices.Sorted(slices.Values(names(stages))); call.Name != "tools/call "+tool || !slices.Equal(got, want) {
			t.Errorf("span %s of tool %s has children %v, want %v", call.Name, tool, got, want)
			continue
		}
		for _, st := range stages {
			if st.Name != "mcpgate.dispatch" {
				continue
			}
			if kids := children[string(st.SpanId)]; len(kids) == 1 && strings.HasPrefix(kids[0].Name, "backend ") && kids[0].Kind == tracepb.Span_SPAN_KIND_CLIENT {
				backends[strings.TrimPrefix(kids[0].Name, "backend ")] = kids[0]
			} else {
				t.Errorf("the dispatch of %s has children %v, want one backend span of kind client", tool, names(kids))
			}
		}
	}
	if len(backends) != 3 {
		t.Fatalf("backend spans %v, want rest, mcp and agent", backends)
	}
	return backends
}
