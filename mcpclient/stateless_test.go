package mcpclient

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// A server that speaks the stateless revision gets it: no initialize, no
// session, and calls work; one with sessions only (the fixture with
// -stateless=false, TestEverythingServer) gets initialize instead.
func TestStatelessFixture(t *testing.T) {
	s := connect(t, NewHTTP(everythingServe(t, "-stateless=true"), nil, nil), &Options{LogLevel: "debug"})
	if !s.Stateless() || s.ProtocolVersion() != StatelessVersion || !contains(s.Capabilities(), "tools") {
		t.Fatalf("stateless %v, version %s, capabilities %s", s.Stateless(), s.ProtocolVersion(), s.Capabilities())
	}
	res, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"test_simple_text","arguments":{}}`), nil)
	if err != nil || !contains(res, `"text"`) {
		t.Fatalf("tools/call: %s, %v", res, err)
	}
	var mu sync.Mutex
	var got []string
	opts := &CallOptions{ProgressToken: "tok", Notify: func(method string, _ json.RawMessage) {
		mu.Lock()
		got = append(got, method)
		mu.Unlock()
	}}
	if _, err := s.Call(callCtx(t), "tools/call", json.RawMessage(`{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"tok"}}`), opts); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[0] != "notifications/progress" {
		t.Errorf("progress on the call's stream: %v", got)
	}
	if _, err := s.Call(callCtx(t), "resources/read", json.RawMessage(`{"uri":"test://no-such"}`), nil); err == nil {
		t.Error("reading a missing resource succeeded")
	}

	// Legacy keeps to initialize, which the same server also serves.
	old := connect(t, NewHTTP(everythingServe(t, "-stateless=true"), nil, nil), &Options{Legacy: true})
	if old.Stateless() || old.ProtocolVersion() != ProtocolVersion {
		t.Errorf("Legacy: stateless %v, version %s", old.Stateless(), old.ProtocolVersion())
	}
}

// Every stateless request carries the revision's headers and _meta
// (the per-request capabilities overriding the session's), never a
// session id; a refusal with a JSON-RPC error body comes back as that
// error; notifications are not sent.
func TestStatelessWire(t *testing.T) {
	type seen struct {
		hdr  http.Header
		meta map[string]json.RawMessage
	}
	var mu sync.Mutex
	var reqs []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &m); err != nil || len(m.ID) == 0 {
			t.Errorf("not a request: %s", body)
		}
		mu.Lock()
		reqs = append(reqs, seen{r.Header.Clone(), m.Params.Meta})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "server/discover":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}`)
		case "old/only":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2025-11-25"]}}}`)
		case "tools/call":
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"resultType":"complete","content":[]}}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"no such method"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	s := connect(t, NewHTTP(srv.URL, nil, nil), &Options{Capabilities: json.RawMessage(`{"roots":{}}`)})
	if !s.Stateless() {
		t.Fatal("not stateless")
	}
	params := json.RawMessage(`{"name":"café","arguments":{},"_meta":{"progressToken":"p1"}}`)
	if _, err := s.Call(callCtx(t), "tools/call", params, &CallOptions{Capabilities: json.RawMessage(`{"elicitation":{}}`)}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Call(callCtx(t), "no/such", nil, nil)
	var rpc *mcpgate.RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32601 {
		t.Errorf("refusal: %v", err)
	}
	if err := s.Notify(callCtx(t), "notifications/cancelled", json.RawMessage(`{}`)); err != nil {
		t.Error(err)
	}
	if s.Err() != nil {
		t.Fatalf("the session ended early: %v", s.Err())
	}
	// A refusal of the revision itself ends the session, for its owner
	// to negotiate again.
	if _, err := s.Call(callCtx(t), "old/only", nil, nil); !errors.As(err, &rpc) || rpc.Code != -32022 {
		t.Errorf("version refusal: %v", err)
	}
	if s.Err() == nil {
		t.Error("the session did not end on -32022")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want discover, call and the two refused ones", len(reqs))
	}
	call := reqs[1]
	for k, want := range map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "=?base64?Y2Fmw6k=?=", "Mcp-Session-Id": ""} {
		if got := call.hdr.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	for k, want := range map[string]string{metaVersion: `"2026-07-28"`, metaCaps: `{"elicitation":{}}`, "progressToken": `"p1"`} {
		if got := string(call.meta[k]); got != want {
			t.Errorf("_meta %s: %s, want %s", k, got, want)
		}
	}
	if !strings.Contains(string(reqs[0].meta[metaCaps]), "roots") || reqs[0].hdr.Get("Mcp-Name") != "" {
		t.Errorf("discover: %v %v", reqs[0].meta, reqs[0].hdr)
	}
}
