package e2e

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace collector: it decodes each protobuf
// export and keeps its spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collector.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// trace returns the spans of one trace (hex id).
func (o *otlpReceiver) trace(id string) []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range o.spans {
		if hex.EncodeToString(s.TraceId) == id {
			out = append(out, s)
		}
	}
	return out
}

// traceAPI is a REST backend that records the traceparent it received.
type traceAPI struct {
	mu     sync.Mutex
	parent []string
}

func (a *traceAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.parent = append(a.parent, r.Header.Get("traceparent"))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"stock":3}`)
}

const traceConfig = `users:
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
`

// Two W3C trace contexts a host sends: in the header, and in _meta.
const (
	headerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	metaTrace    = "0af7651916cd43dd8448eb211c80319c"
	unknownTrace = "5b8aa5a2d2c872e8321cf37308d69df2"
	hostSpan     = "00f067aa0ba902b7"
)

// TestTraceThroughRESTTool checks that a tools/call through a REST tool
// makes one trace, joined to the host's traceparent (header, or
// params._meta), whose backend span's context the REST API received; that
// no span holds an argument value; and that the access-log line names the
// trace.
func TestTraceThroughRESTTool(t *testing.T) {
	recv, api := &otlpReceiver{}, &traceAPI{}
	collectorSrv, backend := httptest.NewServer(recv), httptest.NewServer(api)
	t.Cleanup(collectorSrv.Close)
	t.Cleanup(backend.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(traceConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(dir, "data"), "OTEL_EXPORTER_OTLP_ENDPOINT=" + collectorSrv.URL, "OTEL_BSP_SCHEDULE_DELAY=50"}
	g := startGateway(t, env, "--config", cfg, "--log-format", "json")
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	s := openSession(t, g.URL+"/shop/mcp", map[string]string{"Authorization": "Bearer " + key, "traceparent": "00-" + headerTrace + "-" + hostSpan + "-01"})
	if r := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"item":"sesame-4711"}}}`); r.Error != nil {
		t.Fatalf("tools/call: %s", r.Body)
	}
	delete(s.headers, "traceparent")
	meta := fmt.Sprintf(`{"traceparent":"00-%s-%s-01"}`, metaTrace, hostSpan)
	if r := s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{"item":"x"},"_meta":` + meta + `}}`); r.Error != nil {
		t.Fatalf("tools/call: %s", r.Body)
	}
	// An unknown tool's span keeps the method's name alone: a client's
	// names would make span names without bound.
	unknown := fmt.Sprintf(`{"traceparent":"00-%s-%s-01"}`, unknownTrace, hostSpan)
	s.post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope-4711","arguments":{},"_meta":` + unknown + `}}`)
	g.stop() // flushes the spans
	if got := slices.Sorted(slices.Values(names(recv.trace(unknownTrace)))); !slices.Equal(got, []string{"mcpgate.record", "tools/call"}) {
		t.Errorf("the unknown tool's trace has spans %v, want tools/call and its record", got)
	}
	api.mu.Lock()
	received := api.parent
	api.mu.Unlock()
	if len(received) != 2 {
		t.Fatalf("the API got %d calls, want 2", len(received))
	}
	for i, id := range []string{headerTrace, metaTrace} {
		checkTrace(t, recv.trace(id), id, received[i])
	}
	checkAccessLine(t, g.stderr.String(), headerTrace)
}

// checkTrace checks one tools/call's trace: a tools/call span whose
// parent is the host's, a backend span under its dispatch stage whose
// context the API received, and no argument value anywhere.
func checkTrace(t *testing.T, spans []*tracepb.Span, id, received string) {
	t.Helper()
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
		for _, a := range s.Attributes {
			if strings.Contains(a.String(), "sesame") {
				t.Errorf("span %s holds an argument value: %s", s.Name, a)
			}
		}
	}
	// The request span is named after the tool too, as OpenTelemetry's MCP
	// conventions ask (it was "tools/call").
	call, dispatch, back := byName["tools/call count"], byName["mcpgate.dispatch"], byName["backend rest"]
	if call == nil || dispatch == nil || back == nil {
		t.Fatalf("trace %s: spans %v, want tools/call count, mcpgate.dispatch and backend rest", id, names(spans))
	}
	if got := hex.EncodeToString(call.ParentSpanId); got != hostSpan {
		t.Errorf("tools/call's parent is %s, want the host's %s", got, hostSpan)
	}
	// The backend span is the child of the pipeline's dispatch stage span
	// since the stages have spans of their own (it was tools/call's).
	if string(back.ParentSpanId) != string(dispatch.SpanId) || string(dispatch.ParentSpanId) != string(call.SpanId) {
		t.Errorf("the backend span is not a child of mcpgate.dispatch under tools/call")
	}
	if want := "00-" + id + "-" + hex.EncodeToString(back.SpanId) + "-01"; received != want {
		t.Errorf("the API received traceparent %q, want %q (the backend span)", received, want)
	}
	if attr(call, "gen_ai.tool.name") != "count" || attr(call, "mcp.method.name") != "tools/call" {
		t.Errorf("tools/call attributes: %v", call.Attributes)
	}
}

// names returns the spans' names.
func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// attr returns a span's string attribute.
func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// checkAccessLine checks the JSON access-log line of the first call.
func checkAccessLine(t *testing.T, log, traceID string) {
	t.Helper()
	for line := range strings.Lines(log) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "mcp request" || rec["trace_id"] != traceID {
			continue
		}
		if rec["tool"] != "count" || rec["outcome"] != "ok" || rec["agent"] != "shop" || strings.Contains(line, "sesame") {
			t.Errorf("access line: %s", line)
		}
		return
	}
	t.Errorf("no access-log line with trace_id %s:\n%s", traceID, log)
}
