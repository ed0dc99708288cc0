package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// lockedLog is a log buffer written by the server and read by the test.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAccessLogSlowCall checks that a call slower than SlowCall is logged
// at warn with slow=true, and a fast one at info, neither with arguments.
func TestAccessLogSlowCall(t *testing.T) {
	log := &lockedLog{}
	h := mustHarness(t, &Options{AccessLog: slog.New(slog.NewTextHandler(log, nil)), SlowCall: time.Second})
	h.gw.setTool("slow", func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		h.clock.advance(2 * time.Second)
		return &mcpgate.Result{Content: []mcpgate.Content{{Type: "text", Text: "late"}}}, nil
	})
	sid := h.mustInit(t, "2025-06-18", nil)
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"sesame-4711"}}}`)
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d access lines, want 2:\n%s", len(lines), log)
	}
	if !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "tool=echo") || strings.Contains(lines[0], "slow=") {
		t.Errorf("fast call: %s", lines[0])
	}
	if !strings.Contains(lines[1], "level=WARN") || !strings.Contains(lines[1], "tool=slow") || !strings.Contains(lines[1], "slow=true") || !strings.Contains(lines[1], "duration=2s") {
		t.Errorf("slow call: %s", lines[1])
	}
	if strings.Contains(log.String(), "sesame") {
		t.Errorf("the access log holds an argument value:\n%s", log)
	}
}

// TestAccessLogBackendFailure checks that a call whose backend could not
// serve it is logged with the failure's code as its outcome, not as the
// tool's own error, and at warn with the backend's message.
func TestAccessLogBackendFailure(t *testing.T) {
	log := &lockedLog{}
	h := mustHarness(t, &Options{AccessLog: slog.New(slog.NewTextHandler(log, nil))})
	h.gw.setTool("late", func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		res := mcpgate.ErrorResult("The API did not answer within 1s.")
		res.Failure = mcpgate.ETIMEOUT
		return res, nil
	})
	sid := h.mustInit(t, "2025-06-18", nil)
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"late","arguments":{}}}`)
	line := strings.TrimSpace(log.String())
	if !strings.Contains(line, "outcome=timeout") || !strings.Contains(line, "level=WARN") || !strings.Contains(line, "did not answer") {
		t.Errorf("access line: %s", line)
	}
}
