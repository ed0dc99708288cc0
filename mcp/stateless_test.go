package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// modernMeta is the _meta a 2026-07-28 request carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// modernReq returns a 2026-07-28 POST of method with the params' other
// members (may be empty), its headers set as a client must.
func modernReq(method, name, members string) req {
	params := "{" + modernMeta
	if members != "" {
		params += "," + members
	}
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return req{body: `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}}`, header: h}
}

// mustModern sends r and returns its status and decoded JSON reply.
func (h *harness) mustModern(tb testing.TB, r req) (int, map[string]any) {
	tb.Helper()
	if r.header["Accept"] == "" {
		r.header["Accept"] = "application/json"
	}
	resp := h.do(tb, r)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		tb.Errorf("a 2026-07-28 request got Mcp-Session-Id %q", sid)
	}
	return resp.StatusCode, mustJSON(tb, mustRead(tb, resp))
}

func TestStatelessDiscover(t *testing.T) {
	h := mustHarness(t, nil)
	status, v := h.mustModern(t, modernReq("server/discover", "", ""))
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, v)
	}
	res := v["result"].(map[string]any)
	diff(t, "resultType", "complete", res["resultType"])
	diff(t, "ttlMs", float64(0), res["ttlMs"])
	diff(t, "cacheScope", "private", res["cacheScope"])
	diff(t, "first supported version", "2026-07-28", res["supportedVersions"].([]any)[0])
	diff(t, "capabilities", map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}}, res["capabilities"])
	diff(t, "instructions", "Invoices: Reads invoices.", res["instructions"])
	info := res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"]
	diff(t, "serverInfo", map[string]any{"name": "mcpgate", "version": "9.9"}, info)
	if n := h.srv.OpenSessions(); n != 0 || len(h.store.sessions) != 0 {
		t.Errorf("sessions: %d live, %d stored; want none", n, len(h.store.sessions))
	}
}

func TestStatelessToolsListAndCall(t *testing.T) {
	h := mustHarness(t, nil)
	h.gw.tools = []ListedTool{{Name: "echo", JSON: json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)}}
	var got *mcpgate.Call
	h.gw.setTool("echo", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		got = call
		return echoTool(ctx, call)
	})
	status, v := h.mustModern(t, modernReq("tools/list", "", ""))
	res := v["result"].(map[string]any)
	if status != http.StatusOK || res["resultType"] != "complete" || res["ttlMs"] != float64(0) || res["cacheScope"] != "private" {
		t.Fatalf("tools/list: %d %v", status, v)
	}
	diff(t, "tools", 1, len(res["tools"].([]any)))
	status, v = h.mustModern(t, modernReq("tools/call", "echo", `"name":"echo","arguments":{"x":1}`))
	res, _ = v["result"].(map[string]any)
	if status != http.StatusOK || res["resultType"] != "complete" {
		t.Fatalf("tools/call: %d %v", status, v)
	}
	if _, ok := res["ttlMs"]; ok {
		t.Error("a tool result carries ttlMs")
	}
	diff(t, "text", `{"x":1}`, res["content"].([]any)[0].(map[string]any)["text"])
	diff(t, "session of the call", "", got.SessionID)
	diff(t, "client capabilities the gateway sees", `{}`, string(got.Client.ClientCapabilities()))
}

func TestStatelessHeaderRules(t *testing.T) {
	h := mustHarness(t, nil)
	with := func(r req, k, v string) req { r.header[k] = v; return r }
	metaless := modernReq("tools/list", "", "")
	metaless.body = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`
	capless := modernReq("tools/list", "", "")
	capless.body = strings.Replace(capless.body, `,"io.modelcontextprotocol/clientCapabilities":{}`, "", 1)
	b64 := base64Sentinel("echo")
	for _, tc := range []struct {
		name   string
		r      req
		status int
		code   int
	}{
		{"version unsupported", with(modernReq("tools/list", "", ""), "MCP-Protocol-Version", "2030-01-01"), 400, codeUnsupportedVersion},
		{"_meta version missing", metaless, 400, codeInvalidParams},
		{"_meta capabilities missing", capless, 400, codeInvalidParams},
		{"Mcp-Method missing", with(modernReq("tools/list", "", ""), "Mcp-Method", ""), 400, codeHeaderMismatch},
		{"Mcp-Method differs", with(modernReq("tools/list", "", ""), "Mcp-Method", "tools/call"), 400, codeHeaderMismatch},
		{"Mcp-Method in another case", with(modernReq("tools/list", "", ""), "Mcp-Method", "Tools/List"), 400, codeHeaderMismatch},
		{"Mcp-Name missing", modernReq("tools/call", "", `"name":"echo"`), 400, codeHeaderMismatch},
		{"Mcp-Name differs", modernReq("tools/call", "other", `"name":"echo"`), 400, codeHeaderMismatch},
		{"Mcp-Name bad base64", modernReq("tools/call", "=?base64?***?=", `"name":"echo"`), 400, codeHeaderMismatch},
		{"Mcp-Name base64 matches", modernReq("tools/call", b64, `"name":"echo"`), 200, 0},
		{"unknown method", modernReq("nope/nothing", "", ""), 404, codeMethodNotFound},
		{"ping was removed", modernReq("ping", "", ""), 404, codeMethodNotFound},
		{"initialize is not part of it", modernReq("initialize", "", ""), 404, codeMethodNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, v := h.mustModern(t, tc.r)
			if status != tc.status || errCode(v) != tc.code {
				t.Fatalf("got %d %d, want %d %d: %v", status, errCode(v), tc.status, tc.code, v)
			}
			if tc.code != 0 && v["id"] != float64(7) {
				t.Errorf("error id %v, want 7", v["id"])
			}
		})
	}
	t.Run("unsupported lists versions", func(t *testing.T) {
		_, v := h.mustModern(t, with(modernReq("tools/list", "", ""), "MCP-Protocol-Version", "1900-01-01"))
		data := v["error"].(map[string]any)["data"].(map[string]any)
		diff(t, "requested", "1900-01-01", data["requested"])
		diff(t, "supported[0]", "2026-07-28", data["supported"].([]any)[0])
	})
	t.Run("_meta differs from header", func(t *testing.T) {
		r := modernReq("tools/list", "", "")
		r.body = strings.Replace(r.body, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/protocolVersion":"2025-11-25"`, 1)
		status, v := h.mustModern(t, r)
		if status != 400 || errCode(v) != codeHeaderMismatch {
			t.Fatalf("got %d %v", status, v)
		}
	})
}

// base64Sentinel encodes v as the revision's =?base64?…?= header value.
func base64Sentinel(v string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// TestStatelessOldRevisionsUnchanged checks that a request without the
// 2026-07-28 header still needs a session, and that an old client's
// unsupported header inside a session keeps its old error.
func TestStatelessOldRevisionsUnchanged(t *testing.T) {
	h := mustHarness(t, nil)
	resp := h.do(t, req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(mustRead(t, resp), "Mcp-Session-Id") {
		t.Fatalf("no session: status %d", resp.StatusCode)
	}
	sid := h.mustInit(t, "2025-11-25", nil)
	resp = h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: map[string]string{"MCP-Protocol-Version": "1900-01-01"}})
	body := mustRead(t, resp)
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "-32022") {
		t.Fatalf("old session, bad version: %d %s", resp.StatusCode, body)
	}
	v := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if _, ok := v["result"].(map[string]any)["resultType"]; ok {
		t.Error("a 2025-11-25 result carries resultType")
	}
}

// TestStatelessCloseCancels checks that closing the connection of a
// 2026-07-28 call cancels it: the revision's only cancellation on HTTP.
func TestStatelessCloseCancels(t *testing.T) {
	h := mustHarness(t, nil)
	started, cancelled := make(chan struct{}), make(chan struct{})
	h.gw.setTool("wait", func(ctx context.Context, _ *mcpgate.Call) (*mcpgate.Result, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		resp, err := h.send(ctx, modernReq("tools/call", "wait", `"name":"wait"`))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the call was not cancelled when the client went away")
	}
	<-errc
}

// TestStatelessLogLevel checks that logs reach a 2026-07-28 request only
// when its _meta asks for them, at that level.
func TestStatelessLogLevel(t *testing.T) {
	h := mustHarness(t, nil)
	h.gw.setTool("chatty", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.Log("debug", "t", "low")
		call.Notifier.Log("warning", "t", "high")
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	quiet := modernReq("tools/call", "chatty", `"name":"chatty"`)
	resp := h.do(t, quiet)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("no logLevel: got %s, want a JSON reply with no notifications", ct)
	}
	loud := modernReq("tools/call", "chatty", `"name":"chatty"`)
	loud.body = strings.Replace(loud.body, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"warning"`, 1)
	resp = h.do(t, loud)
	events := newSSEReader(resp).mustEvents(t)
	var msgs []string
	for _, e := range events {
		if e.Data != "" {
			msgs = append(msgs, e.Data)
		}
	}
	if len(msgs) != 2 || !strings.Contains(msgs[0], `"high"`) || !strings.Contains(msgs[1], `"resultType":"complete"`) {
		t.Fatalf("events: %q", msgs)
	}
	if events[0].Data == "" {
		t.Error("a 2026-07-28 stream starts with a priming event or comment")
	}
}

// TestStatelessRelay checks relayed methods on 2026-07-28: results gain
// resultType (and caching hints for lists and reads), capabilities keep
// listChanged and subscribe, and a method the agent lacks, or one the
// revision removed, is 404.
func TestStatelessRelay(t *testing.T) {
	h, _ := mustRelayHarness(t, nil)
	_, v := h.mustModern(t, modernReq("server/discover", "", ""))
	caps := v["result"].(map[string]any)["capabilities"]
	lc := map[string]any{"listChanged": true}
	// resources.subscribe stays: subscriptions/listen takes resourceSubscriptions
	// (it was dropped while listen offered list changes only).
	diff(t, "capabilities", map[string]any{"tools": lc, "logging": map[string]any{}, "resources": map[string]any{"listChanged": true, "subscribe": true}, "prompts": lc}, caps)
	status, v := h.mustModern(t, modernReq("resources/read", "file:///a", `"uri":"file:///a"`))
	res, _ := v["result"].(map[string]any)
	if status != 200 || res["resultType"] != "complete" || res["ttlMs"] != float64(0) || res["method"] != "resources/read" {
		t.Fatalf("resources/read: %d %v", status, v)
	}
	status, v = h.mustModern(t, modernReq("prompts/get", "p", `"name":"p"`))
	res, _ = v["result"].(map[string]any)
	if _, cached := res["ttlMs"]; status != 200 || res["resultType"] != "complete" || cached {
		t.Fatalf("prompts/get: %d %v", status, v)
	}
	for _, method := range []string{"completion/complete", "resources/subscribe"} {
		if status, v := h.mustModern(t, modernReq(method, "", "")); status != 404 || errCode(v) != codeMethodNotFound {
			t.Errorf("%s: %d %v, want 404 -32601", method, status, v)
		}
	}
}

// TestModernResult checks both paths of modernResult: appended members,
// and a result whose own _meta (or resultType) must be merged, not
// duplicated.
func TestModernResult(t *testing.T) {
	s := New(&Options{Sessions: newMemStore(), Gateway: &fakeGateway{}, ServerVersion: "9.9"})
	defer s.Close()
	info := `"io.modelcontextprotocol/serverInfo":{"name":"mcpgate","version":"9.9"}`
	for _, tc := range []struct{ method, in, want string }{
		{"tools/call", `{}`, `{"resultType":"complete","_meta":{` + info + `}}`},
		{"tools/call", ` {"content":[]} `, `{"content":[],"resultType":"complete","_meta":{` + info + `}}`},
		{"tools/list", `{"tools":[]}`, `{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{` + info + `}}`},
		{"tools/call", `{"content":[],"_meta":{"mcpgate/context_id":"c1"}}`, `{"_meta":{` + info + `,"mcpgate/context_id":"c1"},"content":[],"resultType":"complete"}`},
		{"resources/read", `{"resultType":"old","contents":[]}`, `{"_meta":{` + info + `},"cacheScope":"private","contents":[],"resultType":"complete","ttlMs":0}`},
		{"tools/call", `[1]`, `[1]`},
	} {
		if got := string(s.modernResult(tc.method, []byte(tc.in))); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.method, tc.in, got, tc.want)
		}
		var v any
		if err := json.Unmarshal(s.modernResult(tc.method, []byte(tc.in)), &v); err != nil {
			t.Errorf("%s: not JSON: %v", tc.in, err)
		}
	}
}

// TestStatelessRelayAdapts checks what a relayed 2026-07-28 request needs
// beyond the checks: its reserved _meta keys stay with the gateway (the
// upstream speaks its own revision over its own session), an upstream's
// -32002 becomes -32602, and an upstream's -32021 is HTTP 400.
func TestStatelessRelayAdapts(t *testing.T) {
	h, g := mustRelayHarness(t, nil)
	r := modernReq("resources/read", "file:///a", `"uri":"file:///a"`)
	r.body = strings.Replace(r.body, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
	if status, v := h.mustModern(t, r); status != 200 {
		t.Fatalf("resources/read: %d %v", status, v)
	}
	diff(t, "relayed params", `{"_meta":{"progressToken":"p1"},"uri":"file:///a"}`, string(g.last().Params))
	h.mustModern(t, modernReq("prompts/list", "", ""))
	diff(t, "relayed params without other _meta", `{}`, string(g.last().Params))

	g.relay = func(context.Context, *mcpgate.Forward) (json.RawMessage, error) {
		return nil, &mcpgate.RPCError{Code: -32002, Message: "Resource not found", Data: json.RawMessage(`{"uri":"file:///a"}`)}
	}
	status, v := h.mustModern(t, modernReq("resources/read", "file:///a", `"uri":"file:///a"`))
	if status != 200 || errCode(v) != codeInvalidParams {
		t.Errorf("resource not found: %d %v, want -32602", status, v)
	}
	g.relay = func(context.Context, *mcpgate.Forward) (json.RawMessage, error) {
		return nil, &mcpgate.RPCError{Code: -32021, Message: "Missing required client capability", Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
	}
	if status, v := h.mustModern(t, modernReq("prompts/get", "p", `"name":"p"`)); status != 400 || errCode(v) != -32021 {
		t.Errorf("missing capability: %d %v, want 400 -32021", status, v)
	}
	sid := h.mustInit(t, "2025-11-25", nil)
	if v := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}}`); errCode(v) != -32021 {
		t.Errorf("session: %v", v)
	}
}

// TestStatelessParamHeaders checks the Mcp-Param-{Name} rules on a tool
// whose inputSchema marks parameters with x-mcp-header.
func TestStatelessParamHeaders(t *testing.T) {
	h := mustHarness(t, nil)
	h.gw.tools = []ListedTool{{Name: "sql", JSON: json.RawMessage(`{"name":"sql","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"limit":{"type":"integer","x-mcp-header":"Limit"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}},
		"query":{"type":"string"}}}}`)}}
	h.gw.setTool("sql", echoTool)
	call := func(args string, hdr map[string]string) (int, int) {
		r := modernReq("tools/call", "sql", `"name":"sql","arguments":`+args)
		for k, v := range hdr {
			r.header[k] = v
		}
		status, v := h.mustModern(t, r)
		return status, errCode(v)
	}
	all := map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Limit": "42", "Mcp-Param-Dry": "true"}
	full := `{"region":"us-west1","limit":42.0,"opts":{"dry":true},"query":"x"}`
	for _, tc := range []struct {
		name         string
		args         string
		hdr          map[string]string
		status, code int
	}{
		{"all match", full, all, 200, 0},
		{"base64 matches", `{"region":"Hello, 世界"}`, map[string]string{"Mcp-Param-Region": "=?base64?" + base64.StdEncoding.EncodeToString([]byte("Hello, 世界")) + "?="}, 200, 0},
		{"absent and null need none", `{"region":null,"query":"x"}`, nil, 200, 0},
		{"header missing", full, map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Dry": "true"}, 400, codeHeaderMismatch},
		{"value differs", full, map[string]string{"Mcp-Param-Region": "eu-west1", "Mcp-Param-Limit": "42", "Mcp-Param-Dry": "true"}, 400, codeHeaderMismatch},
		{"number differs", full, map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Limit": "43", "Mcp-Param-Dry": "true"}, 400, codeHeaderMismatch},
		{"nested boolean differs", full, map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Limit": "42", "Mcp-Param-Dry": "false"}, 400, codeHeaderMismatch},
		{"invalid characters", `{"region":"é"}`, map[string]string{"Mcp-Param-Region": "é"}, 400, codeHeaderMismatch},
		{"bad base64", `{"region":"x"}`, map[string]string{"Mcp-Param-Region": "=?base64?%%%?="}, 400, codeHeaderMismatch},
	} {
		if status, code := call(tc.args, tc.hdr); status != tc.status || code != tc.code {
			t.Errorf("%s: got %d %d, want %d %d", tc.name, status, code, tc.status, tc.code)
		}
	}
}

// TestStatelessListen checks subscriptions/listen: the acknowledgment
// first, naming only the filters agreed to, then the notifications asked
// for with the subscription id, none of the others, and a graceful result
// when the server closes.
func TestStatelessListen(t *testing.T) {
	h := mustHarness(t, nil)
	r := modernReq("subscriptions/listen", "", `"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`)
	r.header["Accept"] = "application/json, text/event-stream"
	resp := h.do(t, r)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sse := newSSEReader(resp)
	ack := sse.mustEvent(t)
	diff(t, "ack", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}`, ack.Data)
	if ack.ID != "" {
		t.Errorf("event id %q on a stream that cannot be resumed", ack.ID)
	}
	h.srv.NotifyAgent("a1", "notifications/prompts/list_changed", nil) // not asked for
	h.srv.NotifyAgent("a2", "notifications/tools/list_changed", nil)   // another agent
	h.srv.NotifyToolsChanged("a1")
	diff(t, "notification", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, sse.mustEvent(t).Data)
	h.srv.Close()
	last := sse.mustEvent(t)
	if !strings.Contains(last.Data, `"id":7,"result":{`) || !strings.Contains(last.Data, `"resultType":"complete"`) || !strings.Contains(last.Data, `"io.modelcontextprotocol/subscriptionId":7`) {
		t.Errorf("graceful end: %s", last.Data)
	}
}

// TestStatelessListenResources checks the resourceSubscriptions filter of
// subscriptions/listen: each URI is subscribed through the relay under the
// stream's own scope, acknowledged, its updates reach the stream with the
// subscription id, and the scope is released when the client closes it.
func TestStatelessListenResources(t *testing.T) {
	closed := make(chan string, 1)
	h, g := mustRelayHarness(t, &Options{SessionClosed: func(id string) { closed <- id }})
	r := modernReq("subscriptions/listen", "", `"notifications":{"resourceSubscriptions":["file:///a"]}`)
	r.header["Accept"] = "application/json, text/event-stream"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sse := newSSEReader(h.doCtx(t, ctx, r))
	diff(t, "ack", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"resourceSubscriptions":["file:///a"]}}}`, sse.mustEvent(t).Data)
	f := g.last()
	if f.Method != "resources/subscribe" || string(f.Params) != `{"uri":"file:///a"}` || !strings.HasPrefix(f.SessionID, "listen-") {
		t.Fatalf("relayed %s %s in %q", f.Method, f.Params, f.SessionID)
	}
	h.srv.NotifySession(f.SessionID, "notifications/resources/updated", json.RawMessage(`{"uri":"file:///a"}`))
	diff(t, "update", `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"uri":"file:///a"}}`, sse.mustEvent(t).Data)
	cancel()
	diff(t, "scope released", f.SessionID, <-closed)
}
