package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// TestReplayCappedPerSession runs calls that stream more than a session may
// keep, then resumes each of their streams from the start: together they
// replay at most replayBytes, and the latest call's events are all kept.
func TestReplayCappedPerSession(t *testing.T) {
	h := mustHarness(t, nil)
	chunk := strings.Repeat("y", 300<<10)
	h.gw.setTool("chatty", func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		for range 4 {
			call.Notifier.Log("error", "", chunk)
		}
		return &mcpgate.Result{}, nil
	})
	sid := h.mustInit(t, "2025-11-25", nil)
	var starts []string
	for i := range 5 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"chatty"}}`, i)
		evs := newSSEReader(h.do(t, req{session: sid, body: body})).mustEvents(t)
		if len(evs) != 6 {
			t.Fatalf("call %d: %d events", i, len(evs))
		}
		starts = append(starts, evs[0].ID) // the priming event
	}
	kept, last := 0, 0
	for _, id := range starts {
		hdr := map[string]string{"Accept": "text/event-stream", "Last-Event-ID": id}
		evs := newSSEReader(h.do(t, req{method: http.MethodGet, session: sid, header: hdr})).mustEvents(t)
		for _, ev := range evs {
			kept += len(ev.Data)
		}
		last = len(evs)
	}
	if kept > replayBytes {
		t.Errorf("the session kept %d bytes of events to replay, more than %d", kept, replayBytes)
	}
	if last != 5 {
		t.Errorf("the latest call replayed %d events, want its 4 logs and its result", last)
	}
}
