package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/reqstate"
)

// inputCaps are the capabilities of a 2026-07-28 client that answers
// server→client requests.
const inputCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

// mrtrReq is a 2026-07-28 tools/call of tool "ask" with id, arguments args
// and the params' other members (may be empty).
func mrtrReq(id int, args, members string) req {
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + inputCaps + `},"name":"ask","arguments":` + args
	if members != "" {
		params += "," + members
	}
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ask"}
	return req{body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}}`, id, params), header: h}
}

// retry is the members of a retry answering key with answer under state.
func retry(state, key, answer string) string {
	return `"requestState":` + mustMarshal(state) + `,"inputResponses":{` + mustMarshal(key) + `:` + answer + `}`
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// mrtrHarness serves a tool "ask" that asks the client for its name with
// elicitation/create, asks times, and answers with the names; runs counts
// its runs, and err receives what RequestClient returned when it failed.
type mrtrHarness struct {
	*harness
	runs   atomic.Int32
	failed chan error
	scopes chan string
}

func mustMRTR(t *testing.T, asks int, wait time.Duration) *mrtrHarness {
	t.Helper()
	return mustMRTRWith(t, asks, &Options{InputWait: wait})
}

// mustMRTRWith is mustMRTR with opts (InputWait, Peers) as the server's
// options.
func mustMRTRWith(t *testing.T, asks int, opts *Options) *mrtrHarness {
	t.Helper()
	m := &mrtrHarness{failed: make(chan error, 4), scopes: make(chan string, 4)}
	opts.RequestState, opts.SessionClosed = reqstate.New([]byte("test secret")), func(id string) { m.scopes <- id }
	m.harness = mustHarness(t, opts)
	m.gw.setTool("ask", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		m.runs.Add(1)
		var names []string
		for i := range asks {
			raw, err := call.Client.RequestClient(ctx, "elicitation/create", json.RawMessage(fmt.Sprintf(`{"message":"name %d?","requestedSchema":{"type":"object"}}`, i)))
			if err != nil {
				m.failed <- err
				return nil, err
			}
			var a struct {
				Content struct{ Name string } `json:"content"`
			}
			json.Unmarshal(raw, &a) //nolint:errcheck // an empty name shows in the result
			names = append(names, a.Content.Name)
		}
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("hello " + strings.Join(names, ", ") + " in " + call.Client.(interface{ ScopeID() string }).ScopeID()[:5])}}, nil
	})
	return m
}

// inputRequired checks that v is an InputRequiredResult with one
// elicitation request and returns its key and requestState.
func inputRequired(t *testing.T, v map[string]any) (key, state string) {
	t.Helper()
	res, _ := v["result"].(map[string]any)
	if res == nil || res["resultType"] != "input_required" {
		t.Fatalf("want an InputRequiredResult, got %v", v)
	}
	reqs := res["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("inputRequests: %v", reqs)
	}
	for k, r := range reqs {
		diff(t, "method", "elicitation/create", r.(map[string]any)["method"])
		key = k
	}
	state, _ = res["requestState"].(string)
	if state == "" {
		t.Fatalf("no requestState in %v", res)
	}
	return key, state
}

// errorOf returns the JSON-RPC error of a reply, failing without one.
func errorOf(t *testing.T, v map[string]any) (float64, string) {
	t.Helper()
	e, _ := v["error"].(map[string]any)
	if e == nil {
		t.Fatalf("want an error, got %v", v)
	}
	return e["code"].(float64), e["message"].(string)
}

func TestMultiRoundElicitation(t *testing.T) {
	m := mustMRTR(t, 1, time.Minute)
	_, v := m.mustModern(t, mrtrReq(1, `{"x":1}`, ""))
	key, state := inputRequired(t, v)
	diff(t, "id of the first answer", float64(1), v["id"])

	_, v = m.mustModern(t, mrtrReq(2, `{"x":1}`, retry(state, key, `{"action":"accept","content":{"name":"Alice"}}`)))
	res, _ := v["result"].(map[string]any)
	if res == nil || res["resultType"] != "complete" {
		t.Fatalf("retry: want a complete result, got %v", v)
	}
	diff(t, "id of the final answer", float64(2), v["id"])
	diff(t, "text", "hello Alice in mrtr-", res["content"].([]any)[0].(map[string]any)["text"])
	diff(t, "runs of the tool", int32(1), m.runs.Load())
	if scope := <-m.scopes; !strings.HasPrefix(scope, "mrtr-") {
		t.Errorf("SessionClosed(%q), want the held call's scope", scope)
	}
	// The state is spent: the call it continued is over.
	_, v = m.mustModern(t, mrtrReq(3, `{"x":1}`, retry(state, key, `{"action":"accept","content":{"name":"Bob"}}`)))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "call again without requestState") {
		t.Errorf("replayed state: %v %q", code, msg)
	}
	diff(t, "held calls", 0, m.srv.HeldCalls())
}

func TestMultiRoundRounds(t *testing.T) {
	m := mustMRTR(t, 2, time.Minute)
	_, v := m.mustModern(t, mrtrReq(1, `{}`, ""))
	key1, state1 := inputRequired(t, v)
	// Keys the call does not wait for are ignored: the same request comes again.
	_, v = m.mustModern(t, mrtrReq(2, `{}`, retry(state1, "unknown", `{"action":"accept","content":{"name":"X"}}`)))
	key1b, state1b := inputRequired(t, v)
	diff(t, "key asked again", key1, key1b)
	if state1b == state1 {
		t.Error("a new round kept its requestState")
	}
	_, v = m.mustModern(t, mrtrReq(3, `{}`, retry(state1, key1, `{"action":"accept","content":{"name":"Old"}}`)))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "earlier round") {
		t.Errorf("stale round: %v %q", code, msg)
	}
	_, v = m.mustModern(t, mrtrReq(4, `{}`, retry(state1b, key1, `{"action":"accept","content":{"name":"Ann"}}`)))
	key2, state2 := inputRequired(t, v)
	if key2 == key1 {
		t.Errorf("second request reused key %q", key1)
	}
	_, v = m.mustModern(t, mrtrReq(5, `{}`, retry(state2, key2, `{"action":"accept","content":{"name":"Bo"}}`)))
	res, _ := v["result"].(map[string]any)
	if res == nil || !strings.HasPrefix(res["content"].([]any)[0].(map[string]any)["text"].(string), "hello Ann, Bo") {
		t.Fatalf("final: %v", v)
	}
}

func TestMultiRoundRefusals(t *testing.T) {
	m := mustMRTR(t, 1, time.Minute)
	_, v := m.mustModern(t, mrtrReq(1, `{"x":1}`, ""))
	key, state := inputRequired(t, v)
	answer := `{"action":"accept","content":{"name":"Eve"}}`
	for name, tc := range map[string]struct {
		args, state, want string
	}{
		"tampered":       {`{"x":1}`, state + "-TAMPERED", "integrity check"},
		"other key":      {`{"x":1}`, reqstate.New([]byte("another secret")).Sign([]byte(`{}`), time.Now().Add(time.Hour)), "integrity check"},
		"other argument": {`{"x":2}`, state, "belongs to another request"},
	} {
		_, v := m.mustModern(t, mrtrReq(2, tc.args, retry(tc.state, key, answer)))
		if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v %q, want -32602 saying %q", name, code, msg, tc.want)
		}
	}
	diff(t, "runs of the tool", int32(1), m.runs.Load())
	// Refused retries leave the call waiting for the genuine one, until the
	// state expires.
	m.clock.advance(time.Minute + time.Millisecond)
	_, v = m.mustModern(t, mrtrReq(3, `{"x":1}`, retry(state, key, answer)))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "expired") {
		t.Errorf("expired: %v %q", code, msg)
	}
}

func TestMultiRoundNoRetry(t *testing.T) {
	m := mustMRTR(t, 1, 10*time.Millisecond)
	_, v := m.mustModern(t, mrtrReq(1, `{}`, ""))
	inputRequired(t, v)
	err := <-m.failed // the held call is cancelled when no retry comes
	if mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE || !strings.Contains(err.Error(), "did not retry") {
		t.Errorf("RequestClient = %v", err)
	}
	<-m.scopes
	// The scope is released and the call dropped from the table as the call
	// ends, in no set order: wait for the table, boundedly.
	for deadline := time.Now().Add(5 * time.Second); m.srv.HeldCalls() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	diff(t, "held calls", 0, m.srv.HeldCalls())
}

func TestMultiRoundNeedsCapabilities(t *testing.T) {
	m := mustMRTR(t, 1, time.Minute)
	// A caller that declares none of elicitation, sampling and roots is not
	// held: the tool's request is refused, as before.
	_, v := m.mustModern(t, modernReq("tools/call", "ask", `"name":"ask","arguments":{}`))
	code, _ := errorOf(t, v)
	diff(t, "code", float64(codeMethodNotFound), code)
	diff(t, "held calls", 0, m.srv.HeldCalls())
}

func TestMultiRoundNotifications(t *testing.T) {
	m := mustMRTR(t, 1, time.Minute)
	m.gw.setTool("ask", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.Progress(1, 2, "asking")
		if _, err := call.Client.RequestClient(ctx, "roots/list", json.RawMessage(`{}`)); err != nil {
			return nil, err
		}
		call.Notifier.Progress(2, 2, "answered")
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("done")}}, nil
	})
	progress := `"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + inputCaps + `}`
	first := mrtrReq(1, `{}`, "")
	first.body = strings.Replace(first.body, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`+inputCaps+`}`, progress, 1)
	first.header["Accept"] = "application/json, text/event-stream"
	evs := newSSEReader(m.do(t, first)).mustEvents(t)
	if len(evs) != 2 || !strings.Contains(evs[0].Data, `"progressToken":"p1","progress":1`) || !strings.Contains(evs[1].Data, `"input_required"`) {
		t.Fatalf("first request's stream: %+v", evs)
	}
	v := mustJSON(t, evs[1].Data)
	res := v["result"].(map[string]any)
	var key string
	for k := range res["inputRequests"].(map[string]any) {
		key = k
	}
	second := mrtrReq(2, `{}`, retry(res["requestState"].(string), key, `{"roots":[]}`))
	second.body = strings.Replace(second.body, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`+inputCaps+`}`, strings.Replace(progress, "p1", "p2", 1), 1)
	second.header["Accept"] = "application/json, text/event-stream"
	evs = newSSEReader(m.do(t, second)).mustEvents(t)
	if len(evs) != 2 || !strings.Contains(evs[0].Data, `"progressToken":"p2","progress":2`) || !strings.Contains(evs[1].Data, `"done"`) {
		t.Fatalf("retry's stream: %+v", evs)
	}
}

func TestMultiRoundOtherReplica(t *testing.T) {
	a, b := mustMRTR(t, 1, time.Minute), mustMRTR(t, 1, time.Minute) // two replicas sharing the secret
	_, v := a.mustModern(t, mrtrReq(1, `{}`, ""))
	key, state := inputRequired(t, v)
	// The other replica verifies the state but does not hold the call: it
	// says to call again, rather than running anything.
	_, v = b.mustModern(t, mrtrReq(2, `{}`, retry(state, key, `{"action":"accept","content":{"name":"Al"}}`)))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "another gateway replica holds it") || strings.Contains(msg, "integrity") {
		t.Errorf("other replica: %v %q", code, msg)
	}
	diff(t, "runs on the other replica", int32(0), b.runs.Load())
	_, v = a.mustModern(t, mrtrReq(3, `{}`, retry(state, key, `{"action":"accept","content":{"name":"Al"}}`)))
	if res, _ := v["result"].(map[string]any); res == nil || res["resultType"] != "complete" {
		t.Errorf("the holding replica: %v", v)
	}
}
