package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

const samplingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}`

// samplingTool asks the client for a completion and answers with what it
// got, or with the error as text; errs receives the error (or nil).
func samplingTool(errs chan<- error) func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
	return func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		res, err := call.Client.RequestClient(ctx, "sampling/createMessage", json.RawMessage(samplingParams))
		errs <- err
		var rpc *mcpgate.RPCError
		switch {
		case errors.As(err, &rpc):
			return mcpgate.ErrorResult("client error %d: %s %s", rpc.Code, rpc.Message, rpc.Data), nil
		case err != nil:
			return nil, err
		}
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("LLM response: " + string(res))}}, nil
	}
}

const sampleCall = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sample"}}`

// mustServerRequest reads the next event, a server→client request, and
// returns its id.
func mustServerRequest(tb testing.TB, r *sseReader, method string) string {
	tb.Helper()
	ev := r.mustEvent(tb)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil || m.Method != method || m.ID == nil || ev.ID == "" {
		tb.Fatalf("not a %s request: %+v", method, ev)
	}
	if method == "sampling/createMessage" && string(m.Params) != samplingParams {
		tb.Errorf("params %s", m.Params)
	}
	return string(m.ID)
}

// mustAnswer POSTs a client's response and checks it gets 202.
func (h *harness) mustAnswer(tb testing.TB, sid, body string) {
	tb.Helper()
	if resp := h.do(tb, req{session: sid, body: body}); resp.StatusCode != http.StatusAccepted {
		tb.Fatalf("answer: status %d: %s", resp.StatusCode, mustRead(tb, resp))
	}
}

func TestRequestClient(t *testing.T) {
	tests := []struct {
		name   string
		answer string // the client's response after "id":
		want   string // the tool's result
	}{
		{"result", `"result":{"role":"assistant","content":{"type":"text","text":"yo"},"model":"m"}`,
			`{"content":[{"type":"text","text":"LLM response: {\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"yo\"},\"model\":\"m\"}"}]}`},
		{"error", `"error":{"code":-1,"message":"User rejected sampling request","data":{"why":"no"}}`,
			`{"content":[{"type":"text","text":"client error -1: User rejected sampling request {\"why\":\"no\"}"}],"isError":true}`},
		{"malformed error", `"error":{"message":"no code"}`,
			`{"content":[{"type":"text","text":"client error -32603: the client answered with a malformed error "}],"isError":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := mustHarness(t, nil)
			errs := make(chan error, 1)
			h.gw.setTool("sample", samplingTool(errs))
			sid := h.mustInitCaps(t, "2025-11-25", `{"sampling":{}}`, nil)
			r := newSSEReader(h.do(t, req{session: sid, body: sampleCall}))
			if ev := r.mustEvent(t); ev.Data != "" {
				t.Fatalf("first event %+v, want priming", ev)
			}
			id := mustServerRequest(t, r, "sampling/createMessage")
			h.mustAnswer(t, sid, `{"jsonrpc":"2.0","id":`+id+`,`+tt.answer+`}`)
			diff(t, "result", `{"jsonrpc":"2.0","id":5,"result":`+tt.want+`}`, r.mustEvent(t).Data)
			<-errs

			// A late answer, and one to a request never sent, are ignored.
			h.mustAnswer(t, sid, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
			h.mustAnswer(t, sid, `{"jsonrpc":"2.0","id":"nope","result":{}}`)
			if got := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":6,"method":"ping"}`); got["result"] == nil {
				t.Errorf("ping after stray answers: %v", got)
			}
		})
	}
}

func TestRequestClientNeedsCapability(t *testing.T) {
	h := mustHarness(t, nil)
	errs := make(chan error, 1)
	h.gw.setTool("sample", samplingTool(errs))
	sid := h.mustInitCaps(t, "2025-11-25", `{"elicitation":{}}`, nil)
	got := h.mustRPC(t, sid, sampleCall)
	var rpc *mcpgate.RPCError
	if err := <-errs; !errors.As(err, &rpc) || rpc.Code != codeMethodNotFound {
		t.Errorf("RequestClient error %v", err)
	}
	if res, _ := got["result"].(map[string]any); res["isError"] != true {
		t.Errorf("reply %v", got)
	}
}

func TestRequestClientCancelled(t *testing.T) {
	h := mustHarness(t, nil)
	errs := make(chan error, 1)
	h.gw.setTool("sample", samplingTool(errs))
	sid := h.mustInitCaps(t, "2025-11-25", `{"sampling":{}}`, nil)
	r := newSSEReader(h.do(t, req{session: sid, body: sampleCall}))
	r.mustEvent(t) // priming
	id := mustServerRequest(t, r, "sampling/createMessage")
	h.mustAnswer(t, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("RequestClient error %v", err)
	}
	var data []string
	for _, ev := range r.mustEvents(t) {
		data = append(data, ev.Data)
	}
	diff(t, "events after cancellation", []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"the gateway stopped waiting: context canceled"}}`,
	}, data)
}

func TestRequestClientSessionEnds(t *testing.T) {
	closed := make(chan string, 2)
	h := mustHarness(t, &Options{SessionClosed: func(id string) { closed <- id }})
	errs := make(chan error, 1)
	h.gw.setTool("sample", samplingTool(errs))
	sid := h.mustInitCaps(t, "2025-11-25", `{"sampling":{}}`, nil)
	r := newSSEReader(h.do(t, req{session: sid, body: sampleCall}))
	r.mustEvent(t) // priming
	mustServerRequest(t, r, "sampling/createMessage")
	if resp := h.do(t, req{method: http.MethodDelete, session: sid}); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if err := <-errs; mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE {
		t.Errorf("RequestClient error %v", err)
	}
	if got := <-closed; got != sid {
		t.Errorf("SessionClosed(%q), want %q", got, sid)
	}
	select {
	case got := <-closed:
		t.Errorf("SessionClosed called again with %q", got)
	default:
	}
}

func TestRequestClientOnGetStream(t *testing.T) {
	h := mustHarness(t, nil)
	errs := make(chan error, 1)
	h.gw.setTool("sample", samplingTool(errs))
	sid := h.mustInitCaps(t, "2025-11-25", `{"sampling":{}}`, nil)
	jsonOnly := map[string]string{"Accept": "application/json"}

	// Without a GET stream, a JSON-only client cannot be asked.
	got := mustJSON(t, h.mustRawRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sample"}}`))
	if err := <-errs; mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE || errCode(got) != codeGateway {
		t.Errorf("without a GET stream: %v, reply %v", err, got)
	}

	get := newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: map[string]string{"Accept": "text/event-stream"}}))
	get.mustEvent(t) // priming
	out := h.async(t, req{session: sid, body: sampleCall, header: jsonOnly})
	id := mustServerRequest(t, get, "sampling/createMessage")
	h.mustAnswer(t, sid, `{"jsonrpc":"2.0","id":`+id+`,"result":{"model":"m"}}`)
	resp := <-out
	defer resp.Body.Close()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	diff(t, "reply", `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"LLM response: {\"model\":\"m\"}"}]}}`, mustRead(t, resp))
}

func TestNotifySessionAndAgent(t *testing.T) {
	h := mustHarness(t, nil)
	sse := map[string]string{"Accept": "text/event-stream"}
	open := func(url string) (string, *sseReader) {
		sid := h.mustInit(t, "2025-11-25", nil)
		if url != "" {
			sid = mustInitAt(t, h, url)
		}
		r := newSSEReader(h.do(t, req{method: http.MethodGet, url: url, session: sid, header: sse}))
		r.mustEvent(t) // priming
		return sid, r
	}
	sid1, r1 := open("")
	_, r2 := open("")
	_, other := open(h.hs.URL + "/a2/mcp")

	h.srv.NotifySession(sid1, "notifications/resources/updated", json.RawMessage(`{"uri":"test://w"}`))
	h.srv.NotifySession(sid1, "bad", json.RawMessage(`[`)) // dropped: not JSON
	h.srv.NotifyAgent("a1", "notifications/prompts/list_changed", nil)
	h.srv.NotifyAgent("a2", "notifications/resources/list_changed", nil)

	updated := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://w"}}`
	prompts := `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`
	for i, c := range []struct {
		r    *sseReader
		want []string
	}{
		{r1, []string{updated, prompts}},
		{r2, []string{prompts}},
		{other, []string{`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`}},
	} {
		var got []string
		for range c.want {
			ev := c.r.mustEvent(t)
			if ev.ID == "" {
				t.Errorf("stream %d: event without id: %+v", i, ev)
			}
			got = append(got, ev.Data)
		}
		diff(t, fmt.Sprintf("stream %d", i), c.want, got)
	}
}

// mustInitAt opens a session on another agent's endpoint.
func mustInitAt(tb testing.TB, h *harness, url string) string {
	tb.Helper()
	resp := h.do(tb, req{url: url, body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`})
	return resp.Header.Get("Mcp-Session-Id")
}

func TestSessionClosedOnEviction(t *testing.T) {
	closed := make(chan string, 4)
	h := mustHarness(t, &Options{SessionClosed: func(id string) { closed <- id }, MaxSessionsPerIdentity: 1})
	first := h.mustInit(t, "2025-11-25", nil)
	h.mustInit(t, "2025-11-25", nil)
	select {
	case got := <-closed:
		if got != first {
			t.Errorf("SessionClosed(%q), want %q", got, first)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SessionClosed not called for the evicted session")
	}
}

func TestPrimingEventAdvisesRetry(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	// The conformance suite's SSE scenarios send 2025-03-26 in a session
	// negotiated at 2025-11-25: the stream still primes.
	old := map[string]string{"Accept": "text/event-stream", "Mcp-Protocol-Version": "2025-03-26"}
	prefersSSE := map[string]string{"Accept": "text/event-stream, application/json", "Mcp-Protocol-Version": "2025-03-26"}
	for _, r := range []req{
		{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: old},
		{session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`, header: prefersSSE},
		{method: http.MethodGet, session: sid, header: old},
	} {
		ev := newSSEReader(h.do(t, r)).mustEvent(t)
		if ev.ID == "" || ev.Data != "" || ev.Retry != retryMillis {
			t.Errorf("%s %s: first event %+v, want priming with retry", r.method, r.body, ev)
		}
	}
}

func TestSessionClosedWhenEndedElsewhere(t *testing.T) {
	closed := make(chan string, 2)
	h := mustHarness(t, &Options{SessionClosed: func(id string) { closed <- id }})
	sid := h.mustInit(t, "2025-11-25", nil)
	if err := h.store.EndSession(context.Background(), sid, h.clock.Now()); err != nil { // another replica's DELETE
		t.Fatal(err)
	}
	h.clock.advance(revalidateEvery)
	if resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
	if got := <-closed; got != sid {
		t.Errorf("SessionClosed(%q), want %q", got, sid)
	}
}
