package e2e

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mcpURLLine = regexp.MustCompile(`MCP URL:\s+(\S+)`)
	keyLine    = regexp.MustCompile(`API key:\s+(oag_[A-Za-z0-9]+)`)
)

// TestDemo starts `serve --demo` on a fresh data dir, drives it with the
// TypeScript SDK client through every demo tool, restarts it, and checks
// that everything persisted and that the banner's curl lines work.
func TestDemo(t *testing.T) {
	dataDir := t.TempDir()
	g := startGateway(t, nil, "--demo", "--data-dir", dataDir, "--page-size", "2")
	banner := waitFor(t, g.stdout.String, "Claude Desktop")
	url := mustMatch(t, mcpURLLine, banner)
	key := mustMatch(t, keyLine, banner)
	if want := g.URL + "/demo/mcp"; url != want {
		t.Fatalf("banner MCP URL = %q, want %q", url, want)
	}

	rep, ok := runClient(t, clientPlan{URL: url, Headers: bearer(key), Calls: demoCalls()})
	if !ok || rep.Error != nil {
		t.Fatalf("client failed: %+v", rep.Error)
	}
	checkDemoSession(t, rep)
	checkDemoAnnotations(t, rep)
	checkDemoCalls(t, rep, dataDir)
	checkDemoGate(t, g, url, key)

	t.Run("curl lines from the banner", func(t *testing.T) {
		out := runCurlLines(t, banner)
		for _, want := range []string{`"name":"convert_currency"`, `"name":"convert_units"`, `"nextCursor":`} {
			if !strings.Contains(out, want) {
				t.Errorf("tools/list through the banner's curl lines lacks %s:\n%s", want, out)
			}
		}
	})

	g.stop()
	g2 := startGateway(t, nil, "--demo", "--data-dir", dataDir)
	banner2 := waitFor(t, g2.stdout.String, "Claude Desktop")
	if keyLine.MatchString(banner2) {
		t.Errorf("restart printed a key again:\n%s", banner2)
	}
	if !strings.Contains(banner2, "mcpgate key create --user demo") {
		t.Errorf("restart banner does not say how to make another key:\n%s", banner2)
	}
	rep2, ok := runClient(t, clientPlan{URL: g2.URL + "/demo/mcp", Headers: bearer(key),
		Calls: []clientCall{{Name: "list_invoices"}, {Name: "orders", Arguments: map[string]any{"message": "columns"}}}})
	if !ok || len(rep2.Tools) != 8 { // 8 since delete_invoice, the demo's gated tool
		t.Fatalf("after restart: ok=%v tools=%d err=%+v", ok, len(rep2.Tools), rep2.Error)
	}
	if got := rep2.Calls[0].Result.StructuredContent["count"]; got != 1.0 {
		t.Errorf("after restart list_invoices count = %v, want 1", got)
	}
	if o := rep2.Calls[1]; o.Result == nil || o.Result.IsError {
		t.Errorf("after restart the orders agent (a new worker key) = %+v %+v", o.Error, o.Result)
	}
}

// demoCalls calls every demo tool, plus one invalid call.
func demoCalls() []clientCall {
	return []clientCall{
		{Name: "convert_units", Arguments: map[string]any{"value": 10, "from": "km", "to": "mi"}, Progress: true},
		{Name: "convert_currency", Arguments: map[string]any{"amount": 100, "from": "EUR", "to": "USD"}},
		{Name: "get_weather", Arguments: map[string]any{"city": "paris"}},
		{Name: "save_invoice_csv", Arguments: map[string]any{"filename": "march", "rows": []map[string]any{
			{"date": "2025-03-01", "vendor": "Acme, Inc.", "description": "Widgets", "amount": 120.5},
			{"date": "2025-03-02", "vendor": "Globex", "amount": 79.5},
		}}},
		{Name: "list_invoices"},
		{Name: "convert_units", Arguments: map[string]any{"value": "ten", "from": "km"}},
		{Name: "orders", Arguments: map[string]any{"message": "how many rows?"}},
	}
}

// checkDemoSession checks the handshake, paging and session end.
func checkDemoSession(t *testing.T, rep *clientReport) {
	t.Helper()
	if rep.Server.ProtocolVersion != "2025-11-25" || rep.Server.SessionID == "" {
		t.Errorf("server = %+v, want protocol 2025-11-25 and a session", rep.Server)
	}
	// The demo has 8 tools since delete_invoice, which needs approval, was
	// added to show the approval gate; they still fill 4 pages of 2.
	if len(rep.Pages) != 4 || len(rep.Tools) != 8 {
		t.Errorf("pages = %v, want 8 tools over 4 pages of 2", rep.Pages)
	}
	if rep.SessionDelete != "ok" {
		t.Errorf("session DELETE = %v, want ok", rep.SessionDelete)
	}
	for _, tool := range rep.Tools {
		agentTool := tool.Name == "orders" || tool.Name == "csv_query" // the agent's tools declare no output
		if tool.Description == "" || len(tool.InputSchema) == 0 || (len(tool.OutputSchema) == 0 && !agentTool) {
			t.Errorf("tool %s lacks a description or schema", tool.Name)
		}
	}
}

// checkDemoAnnotations checks the hints each demo tool is listed with
// (demo and csvq test them against what the tools do). The orders chat
// tool states none: an agent's chat tool makes no promises, so the
// specification's cautious defaults apply.
func checkDemoAnnotations(t *testing.T, rep *clientReport) {
	t.Helper()
	readOnly := map[string]any{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
	want := map[string]map[string]any{
		"convert_units": readOnly, "convert_currency": readOnly, "get_weather": readOnly, "list_invoices": readOnly, "csv_query": readOnly,
		"save_invoice_csv": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false},
		"delete_invoice":   {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false},
		"orders":           nil,
	}
	for _, tool := range rep.Tools {
		got := map[string]any{}
		for k, v := range tool.Annotations {
			if strings.HasSuffix(k, "Hint") {
				got[k] = v
			}
		}
		if w := want[tool.Name]; !maps.Equal(w, got) {
			t.Errorf("tool %s hints %v, want %v", tool.Name, got, w)
		}
	}
}

// checkDemoCalls checks each demo tool's result, and that none shows the
// server's data directory.
func checkDemoCalls(t *testing.T, rep *clientReport, dataDir string) {
	t.Helper()
	if len(rep.Calls) != 7 {
		t.Fatalf("calls = %d, want 7", len(rep.Calls))
	}
	for _, c := range rep.Calls {
		if b, _ := json.Marshal(c); strings.Contains(string(b), dataDir) {
			t.Errorf("%s shows the data directory %s: %s", c.Name, dataDir, b)
		}
	}
	for _, c := range rep.Calls[:5] {
		if c.Error != nil || c.Result == nil || c.Result.IsError {
			t.Fatalf("%s failed: error %+v result %+v", c.Name, c.Error, c.Result)
		}
	}
	units := rep.Calls[0].Result.StructuredContent
	if r, _ := units["result"].(float64); math.Abs(r-6.213712) > 1e-5 || units["category"] != "length" {
		t.Errorf("10 km in mi = %v", units)
	}
	if len(rep.Calls[0].Progress) == 0 {
		t.Errorf("convert_units with a progress token got no progress notifications")
	}
	cur := rep.Calls[1].Result.StructuredContent
	if r, _ := cur["result"].(float64); math.Abs(r-103.5) > 1e-9 || cur["rates_date"] == "" {
		t.Errorf("100 EUR in USD = %v, want 103.5", cur)
	}
	if w := rep.Calls[2].Result.StructuredContent; w["city"] != "Paris" || w["conditions"] != "cloudy" {
		t.Errorf("weather in paris = %v", w)
	}
	saved := rep.Calls[3].Result.StructuredContent
	if saved["rows"] != 2.0 || saved["total"] != 200.0 {
		t.Errorf("save_invoice_csv = %v, want 2 rows totalling 200", saved)
	}
	csv, err := os.ReadFile(filepath.Join(dataDir, "demo-invoices", "march.csv"))
	if err != nil || !strings.Contains(string(csv), `"Acme, Inc."`) {
		t.Errorf("march.csv = %q, %v", csv, err)
	}
	if rep.Calls[4].Result.StructuredContent["count"] != 1.0 {
		t.Errorf("list_invoices = %v", rep.Calls[4].Result.StructuredContent)
	}
	bad := rep.Calls[5].Result
	if bad == nil || !bad.IsError || !strings.Contains(bad.Content[0].Text, "/value") || !strings.Contains(bad.Content[0].Text, "to") {
		t.Errorf("invalid arguments: want an isError result naming /value and the missing 'to', got %+v", bad)
	}
	if o := rep.Calls[6]; o.Error != nil || o.Result == nil || o.Result.IsError || o.Result.Content[0].Text != "1200 rows." {
		t.Errorf("orders agent: %+v %+v, want 1200 rows.", o.Error, o.Result)
	}
}

// runCurlLines runs the banner's shell snippet and returns its output.
func runCurlLines(t *testing.T, banner string) string {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	_, rest, _ := strings.Cut(banner, "List the tools with curl")
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "KEY=") || strings.HasPrefix(s, "SID=") || strings.HasPrefix(s, "curl ") {
			lines = append(lines, s)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("banner curl lines = %q", lines)
	}
	out, err := exec.Command("bash", "-c", strings.Join(lines, "\n")).CombinedOutput()
	if err != nil {
		t.Fatalf("curl lines: %v\n%s", err, out)
	}
	return string(out)
}

// bearer is an Authorization header.
func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

// mustMatch returns re's first group in s.
func mustMatch(t *testing.T, re *regexp.Regexp, s string) string {
	t.Helper()
	m := re.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s not found in:\n%s", re, s)
	}
	return m[1]
}

// checkDemoGate calls the demo's gated tool, delete_invoice: the call
// waits in the approvals queue until the demo user (the agent's owner)
// rejects it, and march.csv stays for the checks after the restart.
func checkDemoGate(t *testing.T, g *gateway, url, key string) {
	t.Helper()
	s := &gated{g: g, alice: key, session: openSession(t, url, bearer(key))}
	done := make(chan *rpcResponse, 1)
	go func() {
		done <- s.session.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_invoice","arguments":{"filename":"march"}}}`)
	}()
	a := s.pending(t)
	if a.Tool != "delete_invoice" || string(a.Arguments) != `{"filename":"march"}` {
		t.Fatalf("pending approval %+v", a)
	}
	if st := s.decide(t, key, a.ID, "reject", `{"reason":"keep March"}`); st != 200 {
		t.Fatalf("reject: %d", st)
	}
	if text, isErr := resultText(t, <-done); !isErr || text != "Call to delete_invoice was rejected by demo: keep March" {
		t.Fatalf("rejected delete_invoice: %q (isError %v)", text, isErr)
	}
}
