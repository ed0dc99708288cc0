package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// billingAPI is a REST backend the config's tools call.
type billingAPI struct {
	mu    sync.Mutex
	auth  []string
	paths []string
}

// ServeHTTP records the request and answers with an invoice.
func (b *billingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.auth = append(b.auth, r.Header.Get("Authorization"))
	b.paths = append(b.paths, r.URL.EscapedPath())
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path, "query": r.URL.RawQuery, "body": string(body)})
}

const billingConfig = `users:
  - name: alice
    password: ${env:ALICE_PASSWORD}
agents:
  - id: invoices
    name: Invoice assistant
    description: Reads and files invoices.
    owner: alice
    mcp_enabled: true
    skills:
      - name: billing
        kind: rest
        base_url: BASE
        allow_private: true
        headers: {Authorization: "Bearer ${env:BILLING_TOKEN}"}
        timeout: 5s
        tools:
          - name: get_invoice
            description: Fetch one invoice.
            input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
            request: {method: GET, path: "/invoices/{id}"}
EXTRA`

const extraTool = `          - name: create_invoice
            description: File an invoice.
            input_schema: {type: object, properties: {vendor: {type: string}, amount: {type: number}}, required: [vendor, amount]}
            request: {method: POST, path: /invoices, body: all}
`

// clashingSkill declares get_invoice a second time, in another skill.
const clashingSkill = `      - name: archive
        kind: rest
        base_url: BASE
        allow_private: true
        tools:
          - name: get_invoice
            description: Fetch an archived invoice.
            input_schema: {type: object}
            request: {method: GET, path: /archive}
`

// TestConfigAndCLI applies a config file, makes keys with the CLI, calls
// a tool with an agent key, reloads the file on SIGHUP (a good change,
// then a bad one that must change nothing), and revokes the key.
func TestConfigAndCLI(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	api := &billingAPI{}
	backend := httptest.NewServer(api)
	defer backend.Close()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mcpgate.yaml")
	writeConfig(t, cfgPath, backend.URL, "")
	env := []string{"ALICE_PASSWORD=correct horse battery", "BILLING_TOKEN=s3cret", "MCPGATE_DATA_DIR=" + filepath.Join(dir, "data")}
	g := startGateway(t, env, "--config", cfgPath)
	url := g.URL + "/invoices/mcp"

	bak := strings.TrimSpace(runCLI(t, env, "key", "create", "--agent", "invoices", "--name", "ci"))
	oag := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	if !strings.HasPrefix(bak, "bak_") || !strings.HasPrefix(oag, "oag_") || strings.Contains(bak, "\n") {
		t.Fatalf("key create printed %q and %q", bak, oag)
	}

	rep, ok := runClient(t, clientPlan{URL: url, Headers: map[string]string{"X-Agent-API-Key": bak},
		Calls: []clientCall{{Name: "get_invoice", Arguments: map[string]any{"id": "a/../b c"}}}})
	if !ok || rep.Calls[0].Result == nil || rep.Calls[0].Result.IsError {
		t.Fatalf("get_invoice: %+v %+v", rep.Error, rep.Calls)
	}
	api.mu.Lock()
	if api.auth[0] != "Bearer s3cret" || api.paths[0] != "/invoices/a%2F..%2Fb%20c" {
		t.Errorf("backend saw auth %q path %q", api.auth[0], api.paths[0])
	}
	api.mu.Unlock()

	s := openSession(t, url, bearer(oag))
	if got := s.toolNames(); !slices.Equal(got, []string{"get_invoice"}) {
		t.Fatalf("tools = %v", got)
	}
	writeConfig(t, cfgPath, backend.URL, extraTool)
	g.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, func() bool { return slices.Equal(s.toolNames(), []string{"create_invoice", "get_invoice"}) })

	writeConfig(t, cfgPath, backend.URL, extraTool+clashingSkill)
	g.cmd.Process.Signal(syscall.SIGHUP)
	logLine := waitFor(t, g.stderr.String, "config not applied")
	if !strings.Contains(logLine, "mcpgate.yaml:") || !strings.Contains(logLine, "archive") {
		t.Errorf("bad config log does not name the file, line and both skills:\n%s", logLine)
	}
	if got := s.toolNames(); !slices.Equal(got, []string{"create_invoice", "get_invoice"}) {
		t.Errorf("after a bad config, tools = %v; want them unchanged", got)
	}

	checkCLILists(t, env)
	keyID := keyIDByName(t, env, "ci")
	runCLI(t, env, "key", "revoke", keyID)
	eventually(t, func() bool {
		r := openRaw(url, map[string]string{"X-Agent-API-Key": bak})
		return r == http.StatusUnauthorized
	})
}

// checkCLILists checks agent list, agent show and key list.
func checkCLILists(t *testing.T, env []string) {
	t.Helper()
	list := runCLI(t, env, "agent", "list")
	if !strings.Contains(list, "invoices") || !strings.Contains(list, "alice") {
		t.Errorf("agent list:\n%s", list)
	}
	show := runCLI(t, env, "agent", "show", "invoices")
	for _, want := range []string{"Invoice assistant", "billing", "create_invoice", "/invoices/mcp"} {
		if !strings.Contains(show, want) {
			t.Errorf("agent show lacks %q:\n%s", want, show)
		}
	}
	if out := runCLI(t, env, "version"); !strings.HasPrefix(out, "mcpgate ") {
		t.Errorf("version = %q", out)
	}
}

// keyIDByName finds a key's ID in `key list`, checking no secret shows.
func keyIDByName(t *testing.T, env []string, name string) string {
	t.Helper()
	out := runCLI(t, env, "key", "list")
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[5] == name {
			return f[0]
		}
	}
	t.Fatalf("key %q not in key list:\n%s", name, out)
	return ""
}

// openRaw sends an initialize and returns the HTTP status.
func openRaw(url string, headers map[string]string) int {
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBadConfigAtStart checks that serve refuses a bad file, naming it.
func TestBadConfigAtStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	os.WriteFile(path, []byte("agents:\n  - id: x\n    owner: nobody\n    skils: []\n"), 0o600)
	_, stderr, err := tryCLI(nil, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--config", path)
	if err == nil || !strings.Contains(stderr, "bad.yaml:4") || !strings.Contains(stderr, "skils") {
		t.Errorf("serve with a bad config: err %v, stderr:\n%s", err, stderr)
	}
}

// writeConfig writes the billing config with extra tools.
func writeConfig(t *testing.T, path, base, extra string) {
	t.Helper()
	cfg := strings.ReplaceAll(strings.Replace(billingConfig, "EXTRA", extra, 1), "BASE", base)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds, failing after a generous bound.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 20*time.Second, cond)
}

// eventuallyWithin polls cond until it holds, failing after d.
func eventuallyWithin(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
