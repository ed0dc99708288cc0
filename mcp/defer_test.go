package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TestDeferredWorkRunsAfterTheReply: what a call defers (mcpgate.Deferrer)
// runs once its reply went out: the client has the whole response while
// the deferred work still waits; the work runs even so, on the handler's
// goroutine, and a reply whose work ran takes no more.
func TestDeferredWorkRunsAfterTheReply(t *testing.T) {
	t.Parallel()
	h := mustHarness(t, nil)
	release, ran := make(chan struct{}), make(chan struct{})
	took := make(chan mcpgate.Deferrer, 1)
	h.gw.setTool("defers", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		d, ok := call.Notifier.(mcpgate.Deferrer)
		if !ok || !d.Defer(func() { <-release; close(ran) }) {
			return mcpgate.ErrorResult("the reply took no deferred work"), nil
		}
		took <- d
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("done")}}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	released := false
	defer func() {
		if !released {
			close(release) // let a handler stuck in the work end
		}
	}()
	replied := h.async(t, req{session: sid, header: map[string]string{"Accept": "application/json"},
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"defers","arguments":{}}}`})
	var resp *http.Response
	select {
	case resp = <-replied:
	case <-time.After(10 * time.Second):
		t.Fatal("the reply waited for the deferred work")
	}
	if resp == nil {
		return
	}
	if body := mustRead(t, resp); !strings.Contains(body, `"text":"done"`) {
		t.Fatalf("reply: %s", body)
	}
	resp.Body.Close()
	select {
	case <-ran:
		t.Fatal("the deferred work ran before it was released")
	default:
	}
	released = true
	close(release)
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the deferred work never ran")
	}
	d := <-took
	if d.Defer(func() {}) {
		t.Error("a reply whose deferred work ran took more")
	}
}

// TestBatchRepliesDeferNothing: a call in a batch, whose reply is one of
// the batch's, leaves its work to its caller (Defer reports false).
func TestBatchRepliesDeferNothing(t *testing.T) {
	t.Parallel()
	h := mustHarness(t, nil)
	h.gw.setTool("defers", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if d, ok := call.Notifier.(mcpgate.Deferrer); ok && d.Defer(func() {}) {
			return mcpgate.ErrorResult("a batch's reply took deferred work"), nil
		}
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("inline")}}, nil
	})
	sid := h.mustInit(t, "2025-03-26", nil)
	body := h.mustRawRPC(t, sid, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"defers","arguments":{}}}]`)
	if !strings.Contains(body, `"text":"inline"`) {
		t.Fatalf("reply: %s", body)
	}
}

// TestCallContextEndsAfterTheReply: a call's id is free again as soon as
// the client has its reply, while the work deferred after the reply is
// still held, and the call's context, which its backend waited on, ends
// only after that work. (One that nothing waited on costs nothing to end,
// and ends with the call: TestUnwaitedCallContextEndsAtOnce.)
func TestCallContextEndsAfterTheReply(t *testing.T) {
	t.Parallel()
	h := mustHarness(t, nil)
	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release) // let the held handler end
		}
	}()
	held := make(chan context.Context, 1)
	h.gw.setTool("holds", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.(mcpgate.Deferrer).Defer(func() { <-release })
		ctx.Done() // waited on, as a backend that selects on it
		held <- ctx
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("held")}}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"%s","arguments":{}}}`
	if body := h.mustRawRPC(t, sid, fmt.Sprintf(call, "holds")); !strings.Contains(body, `"text":"held"`) {
		t.Fatalf("the first call with id 7: %s", body)
	}
	ctx := <-held
	// The first handler is still in its deferred work: the second call
	// goes on a connection of its own.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	h.client = &http.Client{Transport: tr}
	if body := h.mustRawRPC(t, sid, fmt.Sprintf(call, "echo")); strings.Contains(body, "already used") || !strings.Contains(body, `"result"`) {
		t.Fatalf("id 7 again while the first call's deferred work is held: %s", body)
	}
	select {
	case <-ctx.Done():
		t.Fatal("the first call's context ended before the work deferred before its end")
	default:
	}
	released = true
	close(release)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first call's context did not end after its deferred work")
	}
}

// TestUnwaitedCallContextEndsAtOnce: the context of a call whose backend
// never waited on it ends when the call does, before its reply's deferred
// work: it has no channel, timer or parent's child to end after the reply.
func TestUnwaitedCallContextEndsAtOnce(t *testing.T) {
	t.Parallel()
	h := mustHarness(t, nil)
	release := make(chan struct{})
	defer close(release)
	held := make(chan context.Context, 1)
	h.gw.setTool("holds", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.(mcpgate.Deferrer).Defer(func() { <-release })
		if ctx.Err() != nil {
			return mcpgate.ErrorResult("the context had ended during the call"), nil
		}
		held <- ctx
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("held")}}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	if body := h.mustRawRPC(t, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"holds","arguments":{}}}`); !strings.Contains(body, `"text":"held"`) {
		t.Fatalf("the call: %s", body)
	}
	ctx := <-held
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("the call's context after its reply: %v, want context.Canceled", ctx.Err())
	}
	<-ctx.Done()
}
