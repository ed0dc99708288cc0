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

// waitLines waits up to 10 s for n lines in log, which a call writes
// after its response went out, and returns them.
func waitLines(t *testing.T, log *lockedLog, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) >= n && lines[0] != "" || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(time.Millisecond)
	}
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
	lines := waitLines(t, log, 2)
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
	line := waitLines(t, log, 1)[0]
	if !strings.Contains(line, "outcome=timeout") || !strings.Contains(line, "level=WARN") || !strings.Contains(line, "did not answer") {
		t.Errorf("access line: %s", line)
	}
}

// waitingHandler is a slog handler whose Handle waits until the test
// lets it go, or 5 s, and records which.
type waitingHandler struct {
	slog.Handler
	release chan struct{}
	waited  chan bool // true when released, false after 5 s
}

func (h *waitingHandler) Handle(ctx context.Context, r slog.Record) error {
	select {
	case <-h.release:
		h.waited <- true
	case <-time.After(5 * time.Second):
		h.waited <- false
	}
	return h.Handler.Handle(ctx, r)
}

// TestAccessLineAfterResponse checks that a tools/call's access line is
// made after its response went out: the client has the response while
// the line is still being written (the logger holds it until the client
// says so; were the line made first, the response would wait for it).
func TestAccessLineAfterResponse(t *testing.T) {
	log := &lockedLog{}
	wh := &waitingHandler{Handler: slog.NewTextHandler(log, nil), release: make(chan struct{}), waited: make(chan bool, 1)}
	h := mustHarness(t, &Options{AccessLog: slog.New(wh)})
	sid := h.mustInit(t, "2025-06-18", nil) // initialize has no access line
	h.mustRPC(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	close(wh.release)
	if !<-wh.waited {
		t.Fatal("the client got the response only after the access line was written")
	}
	if line := waitLines(t, log, 1)[0]; !strings.Contains(line, "tool=echo") {
		t.Errorf("access line: %s", line)
	}
}
