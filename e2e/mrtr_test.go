package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/mrtrwire"
)

// mrtrPost sends a 2026-07-28 tools/call of tool with arguments args and
// the params' other members (may be empty), from a client that declares
// elicitation, sampling and roots, and returns its JSON-RPC reply.
func mrtrPost(t *testing.T, url, key, tool, args, members string) map[string]any {
	t.Helper()
	return mrtrRequest(t, url, key, "tools/call", tool, args, members)
}

// mrtrRequest is mrtrPost for any method that names something (tools/call,
// prompts/get).
func mrtrRequest(t *testing.T, url, key, method, name, args, members string) map[string]any {
	t.Helper()
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}},"name":` + mrtrwire.Quote(name) + `,"arguments":` + args
	if members != "" {
		params += "," + members
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":"m1","method":`+mrtrwire.Quote(method)+`,"params":`+params+`}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + key,
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastEventData(b)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("HTTP %d, not JSON: %q", resp.StatusCode, b)
	}
	return v
}

// TestMultiRoundApproval drives the binary as a 2026-07-28 client on a
// skill with approval: caller: where a session client gets
// elicitation/create, it gets an InputRequiredResult asking to confirm the
// call with its arguments; the retry that confirms runs the call once, and
// the audit log has one call. A tampered requestState is refused, and a
// retry that comes after --input-wait finds the state expired and the call
// withdrawn (audited as rejected, the backend never called).
func TestMultiRoundApproval(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	api := &recordingAPI{}
	backend := httptest.NewServer(api)
	t.Cleanup(backend.Close)
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(confirmConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, env, "--config", cfg, "--input-wait", "2s")
	alice := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	url := g.URL + "/files/mcp"
	confirm := map[string]string{"elicitation/create": `{"action":"accept","content":{"confirm":true}}`}

	reqs, state := mrtrwire.InputRequired(t, mrtrPost(t, url, alice, "delete", `{"path":"/tmp/yes"}`, ""))
	for _, r := range reqs {
		p := r.(map[string]any)["params"].(map[string]any)
		if msg, _ := p["message"].(string); !strings.Contains(msg, "delete") || !strings.Contains(msg, "/tmp/yes") {
			t.Errorf("confirmation asked: %v", r)
		}
	}
	if code, msg := mrtrwire.RPCError(t, mrtrPost(t, url, alice, "delete", `{"path":"/tmp/yes"}`, mrtrwire.Answers(reqs, state+"-TAMPERED", confirm))); code != -32602 || !strings.Contains(msg, "integrity") {
		t.Errorf("tampered: %d %q", code, msg)
	}
	if code, msg := mrtrwire.RPCError(t, mrtrPost(t, url, alice, "delete", `{"path":"/tmp/other"}`, mrtrwire.Answers(reqs, state, confirm))); code != -32602 || !strings.Contains(msg, "another request") {
		t.Errorf("other arguments: %d %q", code, msg)
	}
	if text := mrtrwire.CompleteText(t, mrtrPost(t, url, alice, "delete", `{"path":"/tmp/yes"}`, mrtrwire.Answers(reqs, state, confirm))); !strings.Contains(text, "/tmp/yes") {
		t.Errorf("confirmed call: %q", text)
	}
	if got := api.seen(); len(got) != 1 || got[0] != `{"path":"/tmp/yes"}` {
		t.Fatalf("backend saw %q; want the confirmed arguments once", got)
	}

	reqs, state = mrtrwire.InputRequired(t, mrtrPost(t, url, alice, "delete", `{"path":"/tmp/late"}`, ""))
	time.Sleep(2500 * time.Millisecond) // past --input-wait: the state expires and the call is withdrawn
	if code, msg := mrtrwire.RPCError(t, mrtrPost(t, url, alice, "delete", `{"path":"/tmp/late"}`, mrtrwire.Answers(reqs, state, confirm))); code != -32602 || !strings.Contains(msg, "expired") {
		t.Errorf("late retry: %d %q", code, msg)
	}
	if got := api.seen(); len(got) != 1 {
		t.Errorf("backend saw %q after the late retry", got)
	}
	var list struct {
		Calls []auditedCall `json:"calls"`
	}
	(&apiClient{t: t, base: g.URL + "/api/v1", key: alice}).mustDo("GET", "/calls", nil, 200, &list)
	outcomes := map[string]int{}
	for _, c := range list.Calls {
		outcomes[c.Outcome]++
	}
	if len(list.Calls) != 2 || outcomes["ok"] != 1 || outcomes["rejected"] != 1 {
		t.Errorf("audit: %+v; want one ok call and one withdrawn (rejected: canceled)", list.Calls)
	}
}

// startFixtureGateway starts the Go SDK fixture over HTTP and a gateway
// whose agent "everything" relays it, and returns the agent's MCP URL and
// a user key.
func startFixtureGateway(t *testing.T) (url, key string) {
	t.Helper()
	fixture := buildTool(t, everythingServer)
	addr := freeAddr(t)
	startProcess(t, nil, fixture, "-http="+addr, "-stateless=false")
	waitListening(t, addr)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(relayConfig("        url: http://"+addr+"/mcp\n        allow_private: true\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(dir, "data")}
	g := startGateway(t, env, "--config", cfg)
	key = strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	url = g.URL + "/everything/mcp"
	waitForTools(t, url, key)
	return url, key
}

// TestMultiRoundRelay relays the Go SDK fixture, spoken to in 2025-11-25,
// to a 2026-07-28 client: the fixture's elicitation, and its three requests
// made at once (elicitation, sampling, roots), reach the client as
// InputRequiredResults while the upstream call waits; the retry's answers
// go to the waiting upstream, which completes the call; the same for its
// prompt that elicits.
func TestMultiRoundRelay(t *testing.T) {
	t.Parallel()
	url, key := startFixtureGateway(t)

	reqs, state := mrtrwire.InputRequired(t, mrtrPost(t, url, key, "test_elicitation", `{"message":"Who are you?"}`, ""))

	for _, r := range reqs {
		if m := r.(map[string]any); m["method"] != "elicitation/create" || m["params"].(map[string]any)["message"] != "Who are you?" {
			t.Errorf("input request %v", m)
		}
	}
	answer := map[string]string{
		"elicitation/create":     `{"action":"accept","content":{"username":"alice","name":"Alice"}}`,
		"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m","stopReason":"endTurn"}`,
		"roots/list":             `{"roots":[{"uri":"file:///r","name":"r"}]}`,
	}
	if text := mrtrwire.CompleteText(t, mrtrPost(t, url, key, "test_elicitation", `{"message":"Who are you?"}`, mrtrwire.Answers(reqs, state, answer))); !strings.Contains(text, "action=accept") || !strings.Contains(text, "alice") {
		t.Errorf("elicitation result %q", text)
	}

	reqs, state = mrtrwire.InputRequired(t, mrtrPost(t, url, key, "test_input_required_result_multiple_inputs", `{}`, ""))
	methods := map[string]bool{}
	for _, r := range reqs {
		methods[r.(map[string]any)["method"].(string)] = true
	}
	if len(methods) != 3 {
		t.Errorf("input requests %v; want elicitation, sampling and roots in one round", reqs)
	}
	if text := mrtrwire.CompleteText(t, mrtrPost(t, url, key, "test_input_required_result_multiple_inputs", `{}`, mrtrwire.Answers(reqs, state, answer))); text != "Hi Alice — 1 root(s) visible" {
		t.Errorf("multiple inputs result %q", text)
	}

	// prompts/get goes on the call's own upstream session too.
	reqs, state = mrtrwire.InputRequired(t, mrtrRequest(t, url, key, "prompts/get", "test_input_required_result_prompt", `{}`, ""))
	answer["elicitation/create"] = `{"action":"accept","content":{"context":"tea"}}`
	v := mrtrRequest(t, url, key, "prompts/get", "test_input_required_result_prompt", `{}`, mrtrwire.Answers(reqs, state, answer))
	res, _ := v["result"].(map[string]any)
	if msgs, _ := res["messages"].([]any); res["resultType"] != "complete" || len(msgs) != 1 || !strings.Contains(fmt.Sprint(msgs[0]), "Context: tea") {
		t.Errorf("prompts/get after the retry: %v", v)
	}
}

// TestListenResourceUpdates subscribes to the fixture's watched resource
// with the resourceSubscriptions filter of a 2026-07-28
// subscriptions/listen stream: the acknowledgment names the URI, and the
// fixture's next update (it sends one every 3 s) arrives on the stream
// with the subscription id.
func TestListenResourceUpdates(t *testing.T) {
	t.Parallel()
	url, key := startFixtureGateway(t)
	body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://watched-resource"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + key,
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	next := func() string {
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("listen stream: %v", err)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				return data
			}
		}
	}
	if ack := next(); !strings.Contains(ack, `"resourceSubscriptions":["test://watched-resource"]`) {
		t.Fatalf("acknowledgment %s", ack)
	}
	if up := next(); !strings.Contains(up, `"method":"notifications/resources/updated"`) || !strings.Contains(up, `"uri":"test://watched-resource"`) ||
		!strings.Contains(up, `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("update %s", up)
	}
}
