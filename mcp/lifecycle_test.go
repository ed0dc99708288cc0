package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// blockingTool returns a tool that signals started, optionally reports
// progress first, and waits for its context or release; done receives the
// context's cause (nil when released).
func blockingTool(progress bool, started chan<- struct{}, release <-chan struct{}, done chan<- error) func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
	return func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if progress {
			call.Notifier.Progress(1, 0, "started")
		}
		started <- struct{}{}
		select {
		case <-ctx.Done():
			done <- context.Cause(ctx)
			return nil, mcpgate.Errorf(mcpgate.ECANCELED, "stopped")
		case <-release:
			done <- nil
			return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("finished")}}, nil
		}
	}
}

func TestCancelledNotification(t *testing.T) {
	tests := []struct {
		name     string
		progress bool
		id       string
	}{
		{"json reply", false, `"c-1"`},
		{"sse reply", true, `12`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := mustHarness(t, nil)
			started, done := make(chan struct{}, 1), make(chan error, 1)
			h.gw.setTool("block", blockingTool(tt.progress, started, nil, done))
			sid := h.mustInit(t, "2025-11-25", nil)
			replied := h.async(t, req{session: sid, body: `{"jsonrpc":"2.0","id":` + tt.id + `,"method":"tools/call","params":{"name":"block","_meta":{"progressToken":"p"}}}`})
			<-started
			// Cancelling another id does nothing.
			h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other"}}`})
			resp := h.do(t, req{session: sid, body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tt.id + `,"reason":"user stop"}}`})
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel: %d", resp.StatusCode)
			}
			cause := <-done
			if mcpgate.ErrorCode(cause) != mcpgate.ECANCELED || !strings.Contains(mcpgate.ErrorMessage(cause), "user stop") {
				t.Errorf("cause %v", cause)
			}
			call := <-replied
			defer call.Body.Close()
			if !tt.progress {
				v := mustJSON(t, mustRead(t, call))
				diff(t, "reply", map[string]any{"jsonrpc": "2.0", "id": "c-1", "error": map[string]any{"code": -32800.0, "message": "Request cancelled"}}, v)
				return
			}
			evs := newSSEReader(call).mustEvents(t)
			if len(evs) != 2 || strings.Contains(evs[1].Data, `"id":12`) {
				t.Errorf("events %v: want priming and progress only", evs)
			}
		})
	}
}

func TestDeleteEndsSession(t *testing.T) {
	h := mustHarness(t, nil)
	started, done := make(chan struct{}, 1), make(chan error, 1)
	h.gw.setTool("block", blockingTool(false, started, nil, done))
	sid := h.mustInit(t, "2025-11-25", nil)
	replied := h.async(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`})
	<-started
	if resp := h.do(t, req{method: http.MethodDelete, session: sid, header: map[string]string{"X-Test-Identity": "bob"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("DELETE by another identity: %d", resp.StatusCode)
	}
	if resp := h.do(t, req{method: http.MethodDelete, session: sid}); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if cause := <-done; mcpgate.ErrorCode(cause) != mcpgate.ECANCELED {
		t.Errorf("call's cause %v", cause)
	}
	if v := mustJSON(t, mustRead(t, <-replied)); errCode(v) != codeCancelled {
		t.Errorf("call's reply %v", v)
	}
	if h.store.get(sid).EndedAt == nil {
		t.Error("session not ended in the store")
	}
	for _, r := range []req{
		{session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{method: http.MethodGet, session: sid},
		{method: http.MethodDelete, session: sid},
	} {
		if resp := h.do(t, r); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s after DELETE: %d", r.method, resp.StatusCode)
		}
	}
}

func TestDisconnectDoesNotCancel(t *testing.T) {
	for _, progress := range []bool{false, true} {
		t.Run(fmt.Sprint("progress=", progress), func(t *testing.T) {
			h := mustHarness(t, nil)
			started, release, done := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
			h.gw.setTool("block", blockingTool(progress, started, release, done))
			sid := h.mustInit(t, "2025-11-25", nil)
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","_meta":{"progressToken":1}}}`))
				hr.Header.Set("Content-Type", "application/json")
				hr.Header.Set("Mcp-Session-Id", sid)
				if resp, err := http.DefaultClient.Do(hr); err == nil {
					resp.Body.Close()
				}
			}()
			<-started
			cancel()
			h.hs.CloseClientConnections()
			close(release)
			if cause := <-done; cause != nil {
				t.Errorf("the call was canceled: %v", cause)
			}
		})
	}
}

func TestSessionEndedElsewhere(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	ping := req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`}
	if err := h.store.EndSession(context.Background(), sid, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if resp := h.do(t, ping); resp.StatusCode != http.StatusOK {
		t.Fatalf("cached session: %d", resp.StatusCode)
	}
	h.clock.advance(revalidateEvery + time.Millisecond)
	if resp := h.do(t, ping); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after revalidation: %d", resp.StatusCode)
	}
}

func TestSessionFromAnotherReplica(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-06-18", nil)
	other := New(&Options{Sessions: h.store, Gateway: h.gw, Now: h.clock.Now})
	defer other.Close()
	h.srv = other // the harness's handler now serves through the other replica
	v := h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	if v["result"] == nil {
		t.Fatalf("reply %v", v)
	}
	if resp := h.do(t, req{session: sid, body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("batch on a 2025-06-18 session: %d", resp.StatusCode)
	}
}

func TestLastSeenRecordedAtMostOnceAMinute(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	created := h.store.get(sid).LastSeenAt
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for range 5 {
		h.clock.advance(time.Second)
		h.mustRPC(t, sid, ping)
	}
	diff(t, "last seen after 5s", created, h.store.get(sid).LastSeenAt)
	h.clock.advance(time.Minute)
	h.mustRPC(t, sid, ping)
	diff(t, "last seen after a minute", h.clock.Now(), h.store.get(sid).LastSeenAt)
}

func TestResumeCallStream(t *testing.T) {
	h := mustHarness(t, nil)
	proceed, finished := make(chan struct{}), make(chan struct{})
	h.gw.setTool("steps", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.Progress(1, 3, "")
		<-proceed
		call.Notifier.Progress(2, 3, "")
		call.Notifier.Progress(3, 3, "")
		defer close(finished)
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("done")}}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	ctx, cancel := context.WithCancel(context.Background())
	r := newSSEReader(h.doCtx(t, ctx, req{session: sid, body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"s"}}}`}))
	r.mustEvent(t) // priming
	first := r.mustEvent(t)
	cancel() // the connection drops after the first progress event
	h.hs.CloseClientConnections()
	close(proceed)
	<-finished

	get := h.do(t, req{method: http.MethodGet, session: sid, header: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": first.ID}})
	evs := newSSEReader(get).mustEvents(t)
	var data []string
	for _, ev := range evs {
		data = append(data, ev.Data)
	}
	diff(t, "replayed", []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"s","progress":2,"total":3}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"s","progress":3,"total":3}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"done"}]}}`,
	}, data)
	stream, _, _ := parseEventID(first.ID)
	for _, ev := range evs {
		if s, _, _ := parseEventID(ev.ID); s != stream {
			t.Errorf("event %q is not of stream %q", ev.ID, stream)
		}
	}
}

func TestResumeGetStream(t *testing.T) {
	h := mustHarness(t, nil)
	sid := h.mustInit(t, "2025-11-25", nil)
	sse := map[string]string{"Accept": "text/event-stream"}
	ctx, cancel := context.WithCancel(context.Background())
	r := newSSEReader(h.doCtx(t, ctx, req{method: http.MethodGet, session: sid, header: sse}))
	priming := r.mustEvent(t)
	h.srv.NotifyToolsChanged("a1")
	got := r.mustEvent(t)
	cancel()
	h.hs.CloseClientConnections()
	h.srv.NotifyToolsChanged("a1") // buffered while the client is away

	sse["Last-Event-ID"] = got.ID
	r = newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: sse}))
	missed := r.mustEvent(t)
	stream, seq, _ := parseEventID(missed.ID)
	if want, _, _ := parseEventID(priming.ID); stream != want || seq != 2 || missed.Data != toolsChanged {
		t.Errorf("replayed %+v", missed)
	}
	h.srv.NotifyToolsChanged("a1")
	if ev := r.mustEvent(t); ev.Data != toolsChanged {
		t.Errorf("live after resume: %+v", ev)
	}

	// An unknown stream gives a fresh stream.
	sse["Last-Event-ID"] = "zzz_3"
	r = newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: sse}))
	if ev := r.mustEvent(t); ev.Data != "" || strings.HasPrefix(ev.ID, stream+"_") {
		t.Errorf("fresh stream began with %+v", ev)
	}
}

func TestServerCloseCancelsCalls(t *testing.T) {
	h := mustHarness(t, nil)
	started, done := make(chan struct{}, 1), make(chan error, 1)
	h.gw.setTool("block", blockingTool(false, started, nil, done))
	sid := h.mustInit(t, "2025-11-25", nil)
	replied := h.async(t, req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`})
	<-started
	h.srv.Close()
	if cause := <-done; !errors.Is(cause, context.Canceled) {
		t.Errorf("cause %v", cause)
	}
	if v := mustJSON(t, mustRead(t, <-replied)); errCode(v) != codeCancelled {
		t.Errorf("reply %v", v)
	}
}

func TestDuplicateIDInFlight(t *testing.T) {
	h := mustHarness(t, nil)
	started, release, done := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	h.gw.setTool("block", blockingTool(false, started, release, done))
	sid := h.mustInit(t, "2025-11-25", nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`
	first := h.async(t, req{session: sid, body: body})
	<-started
	if v := h.mustRPC(t, sid, body); errCode(v) != codeInvalidRequest {
		t.Errorf("second call with id 1: %v", v)
	}
	close(release)
	<-done
	if v := mustJSON(t, mustRead(t, <-first)); v["result"] == nil {
		t.Errorf("first call: %v", v)
	}
}

// TestConcurrentSessions runs calls, lists, notifications and GET streams
// at once, for the race detector.
func TestConcurrentSessions(t *testing.T) {
	h := mustHarness(t, &Options{KeepAlive: time.Millisecond})
	h.gw.setTool("progress", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				call.Notifier.Progress(float64(i), 8, "")
				call.Notifier.Log("info", "", i)
			})
		}
		wg.Wait()
		return &mcpgate.Result{}, nil
	})
	h.gw.tools = []ListedTool{{Name: "progress", JSON: []byte(`{"name":"progress"}`)}}
	var wg sync.WaitGroup
	for c := range 4 {
		sid := h.mustInit(t, "2025-11-25", nil)
		wg.Go(func() {
			if err := h.tryGet(sid); err != nil {
				t.Error(err)
			}
		})
		for i := range 8 {
			wg.Go(func() {
				if err := h.tryCall(sid, c*100+i); err != nil {
					t.Error(err)
				}
				h.srv.NotifyToolsChanged("a1")
			})
		}
	}
	wg.Wait()
}

// tryGet opens a GET stream and reads its priming event.
func (h *harness) tryGet(sid string) error {
	resp, err := h.send(context.Background(), req{method: http.MethodGet, session: sid, header: map[string]string{"Accept": "text/event-stream"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = newSSEReader(resp).next()
	return err
}

// tryCall runs the progress tool and checks that the stream ends with the
// result, then lists tools.
func (h *harness) tryCall(sid string, id int) error {
	resp, err := h.send(context.Background(), req{session: sid, body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1}}}`, id)})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r, last := newSSEReader(resp), sseEvent{}
	for {
		ev, err := r.next()
		if err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		if ev.Comment == "" {
			last = ev
		}
	}
	if !strings.Contains(last.Data, `"result"`) {
		return fmt.Errorf("call %d: last event %q", id, last.Data)
	}
	list, err := h.send(context.Background(), req{session: sid, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`})
	if err != nil {
		return err
	}
	list.Body.Close()
	if list.StatusCode != http.StatusOK {
		return fmt.Errorf("tools/list: %d", list.StatusCode)
	}
	return nil
}
