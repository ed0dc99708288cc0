package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLastSSEData(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"priming then response", "id: 1\nretry: 1000\ndata: \n\nevent: message\nid: 2\ndata: {\"id\":1}\n\n", `{"id":1}`},
		{"notification then response", "data: {\"method\":\"notifications/progress\"}\n\ndata: {\"result\":{}}\n\n", `{"result":{}}`},
		{"CRLF lines", "data: {\"a\":1}\r\n\r\n", `{"a":1}`},
		{"no data", ": ping\n\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(lastSSEData([]byte(tt.body))); got != tt.want {
				t.Errorf("lastSSEData = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLoadIdleSessions opens idle sessions with `load --idle` on a
// gateway in this process and checks that it reports the resident memory
// per session (the figure itself is the benchmark suite's business).
func TestLoadIdleSessions(t *testing.T) {
	g := mustStartMain(t, benchConfig)
	_, oag := g.mustKey(t, "alice", "")
	out, errOut, err := runCLI(t, nil, "load", "--url", g.mcpURL("bench"), "--key", oag,
		"--idle", "200", "--pid", strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatalf("load --idle: %v\n%s", err, errOut)
	}
	for _, want := range []string{"idle sessions: 200 opened", "KiB per session", "summary: sessions=200 rss_kib_per_session="} {
		if !strings.Contains(out, want) {
			t.Errorf("load --idle printed %q, want %q in it", out, want)
		}
	}
}

// TestLoadIdleStreams: with --streams every idle session holds its GET
// stream open while the memory is read.
func TestLoadIdleStreams(t *testing.T) {
	g := mustStartMain(t, benchConfig)
	_, oag := g.mustKey(t, "alice", "")
	out, errOut, err := runCLI(t, nil, "load", "--url", g.mcpURL("bench"), "--key", oag,
		"--idle", "50", "--streams", "--pid", strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatalf("load --idle --streams: %v\n%s", err, errOut)
	}
	if want := "idle sessions holding their GET streams: 50 opened"; !strings.Contains(out, want) {
		t.Errorf("load --idle --streams printed %q, want %q in it", out, want)
	}
}

// TestLoadTurns calls two agents of one gateway in turn with `load
// --turn`, one session each: both make the same number of calls, and the
// report gives each one's p50 and what it adds over the first's.
func TestLoadTurns(t *testing.T) {
	g := mustStartMain(t, strings.Replace(benchConfig, "EXTRA", "  - {id: other, owner: alice, mcp_enabled: true, skills: [{name: api, kind: rest, base_url: BACKEND, allow_private: true, tools: [{name: echo, input_schema: {type: object}, request: {method: POST, path: /echo, body: all}}]}]}", 1))
	_, oag := g.mustKey(t, "alice", "")
	out, errOut, err := runCLI(t, nil, "load", "--tool", "echo", "--args", `{"text":"hi"}`, "--requests", "20",
		"--turn", "first "+g.mcpURL("bench")+" "+oag, "--turn", "second "+g.mcpURL("other")+" "+oag)
	if err != nil {
		t.Fatalf("load --turn: %v\n%s", err, errOut)
	}
	for _, want := range []string{"2 turns taken in turn", "first        calls: 10 ok, 0 failed", "second       calls: 10 ok, 0 failed",
		"turn: name=first calls=10 p50_us=", "added_us=0 failed=0\nturn: name=second calls=10 p50_us="} {
		if !strings.Contains(out, want) {
			t.Errorf("load --turn printed %q, want %q in it", out, want)
		}
	}
}

// TestLoadTurnGap: with --turn-gap, each call is followed by the wait (4
// calls and 5 ms make at least 20 ms).
func TestLoadTurnGap(t *testing.T) {
	g := mustStartMain(t, strings.Replace(benchConfig, "EXTRA", "", 1))
	_, oag := g.mustKey(t, "alice", "")
	out, errOut, err := runCLI(t, nil, "load", "--tool", "echo", "--args", `{"text":"hi"}`, "--requests", "4", "--turn-gap", "5ms",
		"--turn", "first "+g.mcpURL("bench")+" "+oag, "--turn", "again "+g.mcpURL("bench")+" "+oag)
	if err != nil {
		t.Fatalf("load --turn-gap: %v\n%s", err, errOut)
	}
	_, after, _ := strings.Cut(out, "one call at a time, ")
	took, err := time.ParseDuration(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	if err != nil || took < 20*time.Millisecond || !strings.Contains(out, "first        calls: 2 ok") {
		t.Errorf("load --turn-gap 5ms of 4 calls printed %q, want 2 calls each taking at least 20ms in all", out)
	}
}

// TestLoadTurnsFlags: a --turn is three words, turns are for tools/call
// in a closed loop, and --turn-gap, at most a second, is for turns.
func TestLoadTurnsFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--turn", "only-a-name"},
		{"--turn", "a http://127.0.0.1:1/mcp none", "--rate", "10"},
		{"--turn", "a http://127.0.0.1:1/mcp none", "--method", "tools/list"},
		{"--turn", "a http://127.0.0.1:1/mcp none", "--turn-gap", "-1ms"},
		{"--turn", "a http://127.0.0.1:1/mcp none", "--turn-gap", "2s"},
		{"--url", "http://127.0.0.1:1/mcp", "--turn-gap", "1ms"},
	} {
		if _, _, err := runCLI(t, nil, append([]string{"load"}, args...)...); !errors.Is(err, errUsage) {
			t.Errorf("load %q: %v, want a usage error", args, err)
		}
	}
}

// TestLoadIdleNeedsPID: --idle without --pid is a usage error.
func TestLoadIdleNeedsPID(t *testing.T) {
	if _, _, err := runCLI(t, nil, "load", "--idle", "10"); !errors.Is(err, errUsage) {
		t.Errorf("load --idle without --pid: %v, want a usage error", err)
	}
}

// TestToolsListThousandTools lists an agent with 1,000 tools through every
// page with `load --method tools/list`, which fails on a tool listed
// twice, and checks that all 1,000 arrive.
func TestToolsListThousandTools(t *testing.T) {
	g := mustStartMain(t, thousandToolsConfig(1000))
	_, oag := g.mustKey(t, "alice", "")
	out, errOut, err := runCLI(t, nil, "load", "--url", g.mcpURL("many"), "--key", oag,
		"--method", "tools/list", "--sessions", "1", "--requests", "2")
	if err != nil {
		t.Fatalf("load --method tools/list: %v\n%s", err, errOut)
	}
	for _, want := range []string{"calls: 2 ok, 0 failed", "tools listed: 1000\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("load printed %q, want %q in it", out, want)
		}
	}
}

// thousandToolsConfig is a config whose agent "many" has n REST tools.
func thousandToolsConfig(n int) string {
	var b strings.Builder
	b.WriteString("users: [{name: alice}]\nagents:\n  - id: many\n    owner: alice\n    mcp_enabled: true\n" +
		"    skills:\n      - name: api\n        kind: rest\n        base_url: BACKEND\n        allow_private: true\n        tools:\n")
	for i := range n {
		fmt.Fprintf(&b, "          - {name: tool_%04d, input_schema: {type: object}, request: {method: POST, path: /echo, body: all}}\n", i)
	}
	return b.String()
}
