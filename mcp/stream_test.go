package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// progressTool reports progress 1, 1 (dropped: not increasing), 2 and 3
// of 3, then answers.
func progressTool(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	call.Notifier.Progress(1, 3, "one")
	call.Notifier.Progress(1, 3, "again")
	call.Notifier.Progress(2, 3, "")
	call.Notifier.Progress(3, 0, "")
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("done")}}, nil
}

// logTool logs once at each of four levels, then answers.
func logTool(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	for _, l := range []string{"debug", "info", "warning", "error", "bogus"} {
		call.Notifier.Log(l, "tool", map[string]string{"at": l})
	}
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("logged")}}, nil
}

const (
	progressCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"tok"}}}`
	doneResult   = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`
)

// A call's Notifier wants progress only when the client can get it: a
// progress token, and a reply that may stream.
func TestCallWantsProgressOnlyWhenItCanStream(t *testing.T) {
	h := mustHarness(t, nil)
	wants := make(chan bool, 1)
	h.gw.setTool("probe", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		wants <- mcpgate.WantsProgress(call.Notifier)
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	withToken := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"probe","_meta":{"progressToken":"tok"}}}`
	for _, c := range []struct {
		name, body, accept string
		want               bool
	}{
		{"token, SSE accepted", withToken, "", true},
		{"no token", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"probe"}}`, "", false},
		{"token, JSON only", withToken, "application/json", false},
	} {
		header := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		if c.accept != "" {
			header["Accept"] = c.accept
		}
		mustRead(t, h.do(t, req{session: sid, body: c.body, header: header}))
		if got := <-wants; got != c.want {
			t.Errorf("%s: WantsProgress = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestReplySwitchesToSSE(t *testing.T) {
	h := mustHarness(t, nil)
	h.gw.setTool("progress", progressTool)
	progress := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":3,"message":"one"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":3}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":3}}`,
	}
	tests := []struct {
		name, version, body, accept string
		wantSSE                     bool
		want                        []string // event data, or the JSON body
	}{
		{"priming on 2025-11-25", "2025-11-25", progressCall, "", true, append(append([]string{""}, progress...), doneResult)},
		{"no priming on 2025-03-26", "2025-03-26", progressCall, "", true, append(progress, doneResult)},
		{"no token stays JSON", "2025-11-25", strings.Replace(progressCall, `,"_meta":{"progressToken":"tok"}`, "", 1), "", false, []string{doneResult}},
		{"JSON-only client", "2025-11-25", progressCall, "application/json", false, []string{doneResult}},
		{"integer token", "2025-06-18", strings.Replace(progressCall, `"tok"`, `42`, 1), "", true,
			[]string{strings.Replace(progress[0], `"tok"`, "42", 1), strings.Replace(progress[1], `"tok"`, "42", 1), strings.Replace(progress[2], `"tok"`, "42", 1), doneResult}},
		{"SSE-only client", "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`, "text/event-stream", true,
			[]string{"", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{}"}]}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sid := h.mustInit(t, tt.version, nil)
			hdr := map[string]string{}
			if tt.accept != "" {
				hdr["Accept"] = tt.accept
			}
			resp := h.do(t, req{session: sid, body: tt.body, header: hdr})
			ct := resp.Header.Get("Content-Type")
			if (ct == "text/event-stream") != tt.wantSSE {
				t.Fatalf("Content-Type %q", ct)
			}
			if !tt.wantSSE {
				diff(t, "body", tt.want, []string{mustRead(t, resp)})
				return
			}
			evs := newSSEReader(resp).mustEvents(t)
			var data []string
			for _, ev := range evs {
				data = append(data, ev.Data)
			}
			diff(t, "events", tt.want, data)
			checkEventIDs(t, evs)
		})
	}
}

// checkEventIDs checks that events have ids of one stream, numbered up
// from 0 (the priming event) or 1.
func checkEventIDs(t *testing.T, evs []sseEvent) {
	t.Helper()
	seen := map[string]bool{}
	var stream string
	for i, ev := range evs {
		sid, seq, ok := parseEventID(ev.ID)
		if !ok || seen[ev.ID] {
			t.Errorf("event %d: bad or repeated id %q", i, ev.ID)
		}
		seen[ev.ID] = true
		if stream == "" {
			stream = sid
		}
		if sid != stream || (seq != uint64(i) && seq != uint64(i+1)) {
			t.Errorf("event %d: id %q out of sequence", i, ev.ID)
		}
	}
}

func TestEventIDsUniqueAcrossStreams(t *testing.T) {
	h := mustHarness(t, nil)
	h.gw.setTool("progress", progressTool)
	sid := h.mustInit(t, "2025-11-25", nil)
	seen := map[string]bool{}
	for range 5 {
		for _, ev := range newSSEReader(h.do(t, req{session: sid, body: progressCall})).mustEvents(t) {
			if seen[ev.ID] {
				t.Fatalf("event id %q repeated", ev.ID)
			}
			seen[ev.ID] = true
		}
	}
}

func TestLogLevel(t *testing.T) {
	h := mustHarness(t, nil)
	h.gw.setTool("logs", logTool)
	tests := []struct {
		level string // "" leaves the default
		want  []string
	}{
		{"", []string{"info", "warning", "error"}},
		{"debug", []string{"debug", "info", "warning", "error"}},
		{"error", []string{"error"}},
		{"emergency", nil},
	}
	for _, tt := range tests {
		t.Run("level "+tt.level, func(t *testing.T) {
			sid := h.mustInit(t, "2025-11-25", nil)
			if tt.level != "" {
				v := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+tt.level+`"}}`)
				diff(t, "setLevel result", map[string]any{}, v["result"])
				diff(t, "stored level", tt.level, h.store.get(sid).LogLevel)
			}
			resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"logs"}}`})
			var got []string
			if resp.Header.Get("Content-Type") == "text/event-stream" {
				for _, ev := range newSSEReader(resp).mustEvents(t) {
					if msg := mustJSONOrNil(ev.Data); msg["method"] == "notifications/message" {
						p := msg["params"].(map[string]any)
						diff(t, "logger", "tool", p["logger"])
						got = append(got, p["level"].(string))
					}
				}
			}
			diff(t, "levels sent", tt.want, got)
		})
	}
}

// mustJSONOrNil decodes an event's data; the priming event's is empty.
func mustJSONOrNil(s string) map[string]any {
	var v map[string]any
	json.Unmarshal([]byte(s), &v) //nolint:errcheck // nil for the priming event
	return v
}

func TestNotificationsAfterResultDropped(t *testing.T) {
	h := mustHarness(t, nil)
	kept := make(chan mcpgate.Notifier, 1)
	h.gw.setTool("leak", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.Progress(1, 0, "")
		kept <- call.Notifier
		return &mcpgate.Result{}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"leak","_meta":{"progressToken":1}}}`})
	evs := newSSEReader(resp).mustEvents(t)
	if len(evs) != 3 {
		t.Fatalf("events %v", evs)
	}
	n := <-kept
	n.Progress(2, 0, "late")
	n.Log("error", "", "late")
}

func TestPostStreamKeepAlive(t *testing.T) {
	h := mustHarness(t, &Options{KeepAlive: 10 * time.Millisecond})
	release := make(chan struct{})
	h.gw.setTool("slow", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.Progress(1, 0, "")
		<-release
		return &mcpgate.Result{}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`})
	r := newSSEReader(resp)
	for {
		ev, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Comment == "keep-alive" {
			break
		}
	}
	close(release)
	if last := r.mustEvents(t); len(last) != 1 || !strings.Contains(last[0].Data, `"result"`) {
		t.Errorf("after keep-alive: %v", last)
	}
}

func TestGetStream(t *testing.T) {
	h := mustHarness(t, &Options{KeepAlive: 10 * time.Millisecond})
	sid := h.mustInit(t, "2025-11-25", nil)
	other := h.mustInit(t, "2025-11-25", nil)
	get := h.do(t, req{method: http.MethodGet, session: sid, header: map[string]string{"Accept": "text/event-stream"}})
	if get.StatusCode != http.StatusOK || get.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", get.StatusCode, get.Header.Get("Content-Type"))
	}
	r := newSSEReader(get)
	if ev := r.mustEvent(t); ev.Data != "" || ev.ID == "" {
		t.Fatalf("priming event %+v", ev)
	}
	h.srv.NotifyToolsChanged("a2") // another agent's: not ours
	h.srv.NotifyToolsChanged("a1")
	ev := r.mustEvent(t)
	diff(t, "notification", toolsChanged, ev.Data)
	for {
		ev, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Comment == "keep-alive" {
			break
		}
	}
	if resp := h.do(t, req{method: http.MethodDelete, session: sid}); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if rest := r.mustEvents(t); len(rest) != 0 {
		t.Errorf("events after DELETE: %v", rest)
	}
	// The other session had no GET stream: its notification was dropped,
	// and a stream opened now starts fresh.
	get = h.do(t, req{method: http.MethodGet, session: other, header: map[string]string{"Accept": "text/event-stream"}})
	r = newSSEReader(get)
	r.mustEvent(t) // priming
	h.srv.NotifyToolsChanged("a1")
	if ev := r.mustEvent(t); ev.Data != toolsChanged {
		t.Errorf("got %+v", ev)
	}
}

func TestSecondGetReplacesFirst(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	sse := map[string]string{"Accept": "text/event-stream"}
	first := newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: sse}))
	first.mustEvent(t)
	second := newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: sse}))
	second.mustEvent(t)
	if rest := first.mustEvents(t); len(rest) != 0 {
		t.Errorf("first stream got %v", rest)
	}
	h.srv.NotifyToolsChanged("a1")
	if ev := second.mustEvent(t); ev.Data != toolsChanged {
		t.Errorf("second stream got %+v", ev)
	}
}

// TestStaleLastEventID resumes a GET stream that a newer GET stream
// replaced: it gets a fresh stream, which becomes the session's GET stream.
func TestStaleLastEventID(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	get := func(lastEventID string) *sseReader {
		hdr := map[string]string{"Accept": "text/event-stream"}
		if lastEventID != "" {
			hdr["Last-Event-ID"] = lastEventID
		}
		return newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: hdr}))
	}
	a := get("")
	stale := a.mustEvent(t)
	b := get("")
	b.mustEvent(t)
	if rest := a.mustEvents(t); len(rest) != 0 {
		t.Errorf("replaced stream got %v", rest)
	}
	resumed := get(stale.ID)
	priming := resumed.mustEvent(t)
	staleStream, _, _ := parseEventID(stale.ID)
	if priming.Data != "" || priming.ID == "" || strings.HasPrefix(priming.ID, staleStream+"_") {
		t.Fatalf("want a fresh stream, got %+v", priming)
	}
	if rest := b.mustEvents(t); len(rest) != 0 {
		t.Errorf("replaced stream got %v", rest)
	}
	h.srv.NotifyToolsChanged("a1")
	if ev := resumed.mustEvent(t); ev.Data != toolsChanged {
		t.Errorf("session's GET stream got %+v", ev)
	}
}

// pausingTool pauses its reply stream after progress 1, then waits for
// resume before reporting progress 2 and answering.
func pausingTool(resume <-chan struct{}) func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
	return func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.Progress(1, 2, "")
		call.Notifier.(interface{ PauseStream(time.Duration) }).PauseStream(10 * time.Millisecond)
		<-resume
		call.Notifier.Progress(2, 2, "")
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("done")}}, nil
	}
}

// TestPausedReplyResumes pauses a reply on HTTP/1.1, whose response the
// reply ends itself (the request runs on the handler's goroutine), and on
// HTTP/2, where the request runs on a goroutine of its own so that the
// handler can return.
func TestPausedReplyResumes(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) {
			h := mustHarness(t, nil)
			if proto == "HTTP/2.0" {
				h.serveHTTP2(t)
			}
			testPausedReplyResumes(t, h, proto)
		})
	}
}

func testPausedReplyResumes(t *testing.T, h *harness, proto string) {
	h.gw.pause.Store(true)
	resume := make(chan struct{})
	h.gw.setTool("progress", pausingTool(resume))
	sid := h.mustInit(t, "2025-11-25", nil)

	// The POST's stream ends before the result, advising a retry.
	post := h.do(t, req{session: sid, body: progressCall})
	if post.Proto != proto {
		t.Fatalf("reply over %s, want %s", post.Proto, proto)
	}
	evs := newSSEReader(post).mustEvents(t)
	var data, retries []string
	for _, ev := range evs {
		data, retries = append(data, ev.Data), append(retries, ev.Retry)
	}
	diff(t, "events before the pause", []string{"", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2}}`, ""}, data)
	diff(t, "retry fields", []string{retryMillis, "", "10"}, retries)

	// The call goes on; resuming after the last id gets the rest.
	close(resume)
	get := h.do(t, req{method: http.MethodGet, session: sid, header: map[string]string{"Last-Event-ID": evs[1].ID, "Content-Type": ""}})
	data = nil
	for _, ev := range newSSEReader(get).mustEvents(t) {
		data = append(data, ev.Data)
	}
	diff(t, "events after resuming", []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":2,"total":2}}`, doneResult}, data)
}

func TestPauseNeedsAResumableStream(t *testing.T) {
	h := mustHarness(t, nil)
	resume := make(chan struct{})
	close(resume)
	h.gw.setTool("progress", pausingTool(resume))
	for _, tt := range []struct {
		name, version, accept string
		gatewayPauses         bool
	}{
		{"JSON-only client", "2025-11-25", "application/json", true},
		{"version without priming", "2025-03-26", "", true},
		{"agent whose requests never pause", "2025-11-25", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.gw.pause.Store(tt.gatewayPauses)
			sid := h.mustInit(t, tt.version, nil)
			hdr := map[string]string{}
			if tt.accept != "" {
				hdr["Accept"] = tt.accept
			}
			body := mustRead(t, h.do(t, req{session: sid, body: progressCall, header: hdr}))
			if !strings.Contains(body, `"text":"done"`) {
				t.Errorf("the reply was paused, or lost its result: %q", body)
			}
		})
	}
}

// TestPausableCallRunsOnHandlerGoroutine checks that a call whose reply may
// pause runs on its HTTP/1.1 handler's goroutine, as every other call does:
// no goroutine, channel and fresh stack per call for the pause that almost
// never comes.
func TestPausableCallRunsOnHandlerGoroutine(t *testing.T) {
	h := mustHarness(t, nil)
	h.gw.pause.Store(true)
	stack := make(chan string, 1)
	h.gw.setTool("where", func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		buf := make([]byte, 64<<10)
		stack <- string(buf[:runtime.Stack(buf, false)])
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("here")}}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	body := mustRead(t, h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"where"}}`}))
	if !strings.Contains(body, `"text":"here"`) {
		t.Fatalf("reply %q", body)
	}
	if s := <-stack; !strings.Contains(s, "net/http.(*conn).serve(") {
		t.Errorf("the call ran on a goroutine of its own:\n%s", s)
	}
}

// BenchmarkPausableCall calls a tool of an agent whose replies may pause
// over a real connection: on HTTP/1.1 the call runs on its handler's
// goroutine; on HTTP/2 on a goroutine of its own (servePausable).
func BenchmarkPausableCall(b *testing.B) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		b.Run(proto, func(b *testing.B) {
			h := mustHarness(b, nil)
			if proto == "HTTP/2.0" {
				h.serveHTTP2(b)
			}
			h.gw.pause.Store(true)
			sid := h.mustInit(b, "2025-11-25", nil)
			call := req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`}
			b.ReportAllocs()
			for b.Loop() {
				resp, err := h.send(context.Background(), call)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
