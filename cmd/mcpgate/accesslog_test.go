package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// accessLines returns the gateway's access-log lines (JSON) in order.
func accessLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		if rec["msg"] == "mcp request" {
			out = append(out, rec)
		}
	}
	return out
}

// waitAccessLines waits up to 10 s for n access lines on the gateway's
// stderr, which the gateway writes out a moment after they are logged
// (logbuf), and returns the log.
func waitAccessLines(t *testing.T, g *testGateway, n int) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		log := g.stderr.String()
		if len(accessLines(t, log)) >= n || time.Now().After(deadline) {
			return log
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAccessLog checks that every MCP request gets one JSON access-log
// line with method, agent, tool, outcome, duration and session, never the
// arguments or the key; and that a backend's failure is a warning that
// carries the backend's message.
func TestAccessLog(t *testing.T) {
	g := mustStartGateway(t, "--log-level", "info", "--log-format", "json")
	_, secret := g.mustKey(t, "alice", "")
	s := g.mustInitialize(t, "shop", bearer(secret), "2025-06-18")
	s.call(t, "echo", `{"text":"sesame-4711"}`)
	s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)
	s.post(t, callBody(3, "fail", `{}`, ""), nil)

	log := waitAccessLines(t, g, 3)
	for _, leak := range []string{"sesame-4711", secret} {
		if strings.Contains(log, leak) {
			t.Errorf("the log holds %q", leak)
		}
	}
	lines := accessLines(t, log)
	if len(lines) != 3 {
		t.Fatalf("got %d access lines, want 3:\n%s", len(lines), log)
	}
	wants := []map[string]any{
		{"level": "INFO", "method": "tools/call", "agent": "shop", "tool": "echo", "outcome": "ok", "session": s.id},
		{"level": "INFO", "method": "tools/list", "agent": "shop", "outcome": "ok", "session": s.id},
		{"level": "WARN", "method": "tools/call", "agent": "shop", "tool": "fail", "outcome": "tool_error", "session": s.id},
	}
	for i, w := range wants {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v", i, k, lines[i][k], v)
			}
		}
		if _, ok := lines[i]["duration"]; !ok {
			t.Errorf("line %d has no duration", i)
		}
	}
	if msg, _ := lines[2]["backend_message"].(string); !strings.Contains(msg, "the invoice database is down") {
		t.Errorf("backend_message = %q, want the backend's words", msg)
	}
}

// TestLogFlagsRefused checks that serve refuses an unknown log format or
// level instead of logging otherwise than asked.
func TestLogFlagsRefused(t *testing.T) {
	for _, args := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}, {"--slow-call", "0s"}} {
		env, _, stderr := newTestEnv(nil)
		if err := NewMain(env).ParseFlags(append([]string{"--data-dir", t.TempDir()}, args...)); err == nil {
			t.Errorf("%v accepted", args)
		} else if !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("%v: the message does not name the flag: %s", args, stderr)
		}
	}
}

// TestLogWrittenAtListeningAndClose: with the log's lines held for an
// hour, the listening line is on stderr once Run returns (scripts wait
// for it), a line logged while serving is held, and Close writes it and
// closes the log's writer, so that a line written after it goes straight
// out. (A warning logged while closing would also write the held line;
// the line after Close shows that Close itself ended the holding.)
func TestLogWrittenAtListeningAndClose(t *testing.T) {
	t.Parallel()
	env, _, stderr := newTestEnv(nil)
	m := NewMain(env)
	m.logDelay = time.Hour
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "mcpgate listening") {
		t.Errorf("Run returned without the listening line on stderr:\n%s", stderr)
	}
	m.logger.Info("last words")
	if strings.Contains(stderr.String(), "last words") {
		t.Errorf("an info line was written at once, not held")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m.logger.Info("after close")
	for _, line := range []string{"last words", "after close"} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("%q is not on stderr after Close:\n%s", line, stderr)
		}
	}
}
