package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAgentLoad measures the round trip host → gateway → agent worker →
// gateway → host on loopback with a pull worker (testagent -mode echo, so
// the agent's own work is nil): MCPGATE_AGENT_LOAD=SESSIONSxCALLS runs
// `mcpgate load` with that many concurrent MCP sessions and SESSIONS×CALLS
// calls in all, and logs its report (calls/s, p50/p90/p99 latency, the
// gateway's CPU per call), on SQLite and, with MCPGATE_TEST_POSTGRES set,
// on PostgreSQL. With MCPGATE_AGENT_RATE=R it then runs as many calls
// again on SQLite, the target's engine, paced at R calls/s in all (`load
// --rate`, an open loop), and logs that report too. With
// MCPGATE_AGENT_WIDE=W it also runs as many calls on SQLite from W
// sessions in a closed loop, so that about W calls are in flight at once
// (most of them waiting for one of the worker's slots), and logs that
// report ("many in flight"). scripts/agent-load.sh runs it.
func TestAgentLoad(t *testing.T) {
	spec := os.Getenv("MCPGATE_AGENT_LOAD")
	if spec == "" {
		t.Skip("MCPGATE_AGENT_LOAD not set (SESSIONSxCALLS, like 16x100)")
	}
	sessions, calls, err := parseLoad(spec)
	if err != nil {
		t.Fatal(err)
	}
	rate, wide := os.Getenv("MCPGATE_AGENT_RATE"), os.Getenv("MCPGATE_AGENT_WIDE")
	t.Run("sqlite", func(t *testing.T) { runAgentLoad(t, nil, sessions, calls, rate, wide) })
	t.Run("postgres", func(t *testing.T) {
		runAgentLoad(t, postgresEnv(t), sessions, calls, "", "")
	})
}

// parseLoad reads "SESSIONSxCALLS".
func parseLoad(spec string) (sessions, calls int, err error) {
	a, b, ok := strings.Cut(spec, "x")
	sessions, err1 := strconv.Atoi(a)
	calls, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || sessions < 1 || calls < 1 {
		return 0, 0, fmt.Errorf("MCPGATE_AGENT_LOAD=%q: want SESSIONSxCALLS, like 16x100", spec)
	}
	return sessions, calls, nil
}

// runAgentLoad starts a gateway (on the database env names) and an echo
// worker, checks that the worker answers, and runs `mcpgate load`
// against it, then again paced at rate calls/s unless rate is "", then
// again from wide sessions unless wide is "". The
// gateway writes its log (a line a call, at debug) to a file and the
// worker prints nothing a message, so that the test process reads no
// output while it measures.
func runAgentLoad(t *testing.T, env []string, sessions, calls int, rate, wide string) {
	g := startAgentGatewayLog(t, []agentSkill{{id: "echo", skill: "echo", timeout: "30s"}},
		filepath.Join(t.TempDir(), "gateway.log"), env...)
	startAgentWorker(t, g, "./testagent", "echo", "-mode", "echo", "-quiet", "-concurrency", strconv.Itoa(2*sessions))
	if got := g.call(t, "echo", ask("echo", "ping")); got.Result == nil || got.Result.Content[0].Text != "echo: ping" {
		t.Fatalf("the echo worker answered %+v", got)
	}
	args := []string{"load", "--url", g.mcpURL("echo"), "--key", g.userKey,
		"--tool", "echo", "--args", `{"message":"ping"}`, "--sessions", strconv.Itoa(sessions),
		"--requests", strconv.Itoa(sessions * calls), "--duration", "50s", "--pid", strconv.Itoa(g.cmd.Process.Pid)}
	out := runCLI(t, g.env, args...)
	t.Logf("%d sessions x %d calls:\n%s", sessions, calls, out)
	if !strings.Contains(out, " 0 failed") {
		t.Errorf("some calls failed")
	}
	if rate != "" {
		out := runCLI(t, g.env, append(args, "--rate", rate)...)
		t.Logf("%d sessions x %d calls, paced at %s calls/s:\n%s", sessions, calls, rate, out)
		if !strings.Contains(out, " 0 failed") {
			t.Errorf("some paced calls failed")
		}
	}
	if wide != "" {
		out := runCLI(t, g.env, append(args, "--sessions", wide)...)
		t.Logf("%s sessions, %d calls in all (many in flight):\n%s", wide, sessions*calls, out)
		if !strings.Contains(out, " 0 failed") {
			t.Errorf("some calls from %s sessions failed", wide)
		}
	}
}
