package replicas

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/mrtrwire"
)

// TestMultiRoundElsewhere drives the replicas as a 2026-07-28 stateless
// client whose retry (requestState and inputResponses) reaches another
// replica than the one holding the call, as a load balancer without
// affinity sends it: the retry is forwarded to the holder, which answers
// through the replica the retry reached. Both kinds of held call: an
// approval asked of the caller (the REST backend runs once) and a relayed
// upstream's elicitation, and a call that needs several inputs at once.
// It measures the retry's latency on the holder and forwarded, then kills
// the holder of a waiting call (kill -9): the retry sent elsewhere is told
// to call again without requestState, and calling again works. It has a
// cluster of its own, since it kills a replica.
func TestMultiRoundElsewhere(t *testing.T) {
	t.Parallel()
	e := startEnv(t)
	waitServed(t, e, "everything")
	t.Run("approval", func(t *testing.T) { mrtrApprovalElsewhere(t, e) })
	t.Run("relay", func(t *testing.T) { mrtrRelayElsewhere(t, e) })
	t.Run("latency", func(t *testing.T) { mrtrLatency(t, e) })
	t.Run("killed", func(t *testing.T) { mrtrHolderKilled(t, e) })
}

// mrtrConfirm answers the approval gate's confirmation.
var mrtrConfirm = map[string]string{"elicitation/create": `{"action":"accept","content":{"confirm":true}}`}

// mrtrApprovalElsewhere calls asked_echo (approval: caller) on replica 0
// and confirms it with a retry sent to replica 1.
func mrtrApprovalElsewhere(t *testing.T, e *env) {
	before := e.rest.mrtrCount()
	reqs, state := mrtrwire.InputRequired(t, mrtrCall(t, e, 0, "tools", "tools/call", "asked_echo", `{"text":"forwarded"}`, ""))
	v := mrtrCall(t, e, 1, "tools", "tools/call", "asked_echo", `{"text":"forwarded"}`, mrtrwire.Answers(reqs, state, mrtrConfirm))
	if text := mrtrwire.CompleteText(t, v); !strings.Contains(text, "forwarded") {
		t.Errorf("confirmed through replica 1: %q", text)
	}
	if got := e.rest.mrtrCount() - before; got != 1 {
		t.Errorf("backend ran %d times; want once", got)
	}
	// The state is spent: a replay through replica 2 is refused by the
	// holder, and the backend does not run again.
	v = mrtrCall(t, e, 2, "tools", "tools/call", "asked_echo", `{"text":"forwarded"}`, mrtrwire.Answers(reqs, state, mrtrConfirm))
	if code, msg := mrtrwire.RPCError(t, v); code != -32602 || !strings.Contains(msg, "call again without requestState") {
		t.Errorf("replayed state through replica 2: %d %q", code, msg)
	}
	if got := e.rest.mrtrCount() - before; got != 1 {
		t.Errorf("backend ran %d times after a replay; want once", got)
	}
}

// mrtrRelayAnswers answer the fixture's requests.
var mrtrRelayAnswers = map[string]string{
	"elicitation/create":     `{"action":"accept","content":{"username":"alice","name":"Alice"}}`,
	"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m","stopReason":"endTurn"}`,
	"roots/list":             `{"roots":[{"uri":"file:///r","name":"r"}]}`,
}

// mrtrRelayElsewhere calls the relayed fixture's tools that elicit on one
// replica and answers on another: the answers reach the upstream call
// waiting on the holder's own upstream session.
func mrtrRelayElsewhere(t *testing.T, e *env) {
	reqs, state := mrtrwire.InputRequired(t, mrtrCall(t, e, 1, "everything", "tools/call", "test_elicitation", `{"message":"Who are you?"}`, ""))
	v := mrtrCall(t, e, 2, "everything", "tools/call", "test_elicitation", `{"message":"Who are you?"}`, mrtrwire.Answers(reqs, state, mrtrRelayAnswers))
	if text := mrtrwire.CompleteText(t, v); !strings.Contains(text, "action=accept") || !strings.Contains(text, "alice") {
		t.Errorf("elicitation answered through replica 2: %q", text)
	}
	reqs, state = mrtrwire.InputRequired(t, mrtrCall(t, e, 2, "everything", "tools/call", "test_input_required_result_multiple_inputs", `{}`, ""))
	if len(reqs) != 3 {
		t.Errorf("input requests %v; want elicitation, sampling and roots in one round", reqs)
	}
	v = mrtrCall(t, e, 0, "everything", "tools/call", "test_input_required_result_multiple_inputs", `{}`, mrtrwire.Answers(reqs, state, mrtrRelayAnswers))
	if text := mrtrwire.CompleteText(t, v); text != "Hi Alice — 1 root(s) visible" {
		t.Errorf("multiple inputs answered through replica 0: %q", text)
	}
}

// mrtrLatency times the confirming retry of asked_echo sent to the holder
// and sent to another replica, a few times each, and logs the medians.
func mrtrLatency(t *testing.T, e *env) {
	const n = 7
	var local, forwarded []time.Duration
	for i := range 2 * n {
		to := 0
		if i%2 == 1 {
			to = 1
		}
		args := `{"text":"latency ` + itoa(i) + `"}`
		reqs, state := mrtrwire.InputRequired(t, mrtrCall(t, e, 0, "tools", "tools/call", "asked_echo", args, ""))
		start := time.Now()
		v := mrtrCall(t, e, to, "tools", "tools/call", "asked_echo", args, mrtrwire.Answers(reqs, state, mrtrConfirm))
		took := time.Since(start)
		mrtrwire.CompleteText(t, v)
		if to == 0 {
			local = append(local, took)
		} else {
			forwarded = append(forwarded, took)
		}
	}
	t.Logf("confirming retry of asked_echo, median of %d: on the holder %v, forwarded from another replica %v", n, median(local), median(forwarded))
}

// median is the middle of ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// mrtrHolderKilled kills (-9) the replica holding a call waiting for its
// confirmation: the retry sent to another replica gets -32602 saying to
// call again without requestState, and calling again through the others
// completes. Replica 2 stays down.
func mrtrHolderKilled(t *testing.T, e *env) {
	args := `{"text":"orphan"}`
	reqs, state := mrtrwire.InputRequired(t, mrtrCall(t, e, 2, "tools", "tools/call", "asked_echo", args, ""))
	if err := e.Replica(2).Kill(); err != nil {
		t.Fatal(err)
	}
	v := mrtrCall(t, e, 0, "tools", "tools/call", "asked_echo", args, mrtrwire.Answers(reqs, state, mrtrConfirm))
	if code, msg := mrtrwire.RPCError(t, v); code != -32602 || !strings.Contains(msg, "did not answer") || !strings.Contains(msg, "call again without requestState") {
		t.Errorf("retry after the holder was killed: %d %q", code, msg)
	}
	reqs, state = mrtrwire.InputRequired(t, mrtrCall(t, e, 0, "tools", "tools/call", "asked_echo", args, ""))
	if text := mrtrwire.CompleteText(t, mrtrCall(t, e, 1, "tools", "tools/call", "asked_echo", args, mrtrwire.Answers(reqs, state, mrtrConfirm))); !strings.Contains(text, "orphan") {
		t.Errorf("called again: %q", text)
	}
}

// mrtrCall sends replica i's agent a 2026-07-28 request (method naming
// name, with arguments args and the params' other members) from a client
// that declares elicitation, sampling and roots, and returns its JSON-RPC
// reply.
func mrtrCall(t *testing.T, e *env, i int, agent, method, name, args, members string) map[string]any {
	t.Helper()
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"replicas","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}},"name":` + mustJSON(name) + `,"arguments":` + args
	if members != "" {
		params += "," + members
	}
	req, _ := http.NewRequest("POST", e.Replica(i).URL+"/"+agent+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"m1","method":`+mustJSON(method)+`,"params":`+params+`}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json", "Authorization": "Bearer " + e.key,
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name} {
		req.Header.Set(k, v)
	}
	resp, err := rpcClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("replica %d: HTTP %d, not JSON: %q", i, resp.StatusCode, b)
	}
	return v
}

// mrtrCount is how many calls the REST backend got.
func (b *restBackend) mrtrCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}
