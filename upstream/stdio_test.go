//go:build linux

// The stdio tests watch child processes through /proc and kill them and
// their process groups with signals: they run on Linux only.

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// childPid returns the pid of the link's pooled stdio server.
func childPid(tb testing.TB, l *link) int {
	tb.Helper()
	s, err := l.mainSession(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return s.child.cmd.Process.Pid
}

// processGone reports whether no process (not even a zombie) has pid.
func processGone(pid int) bool {
	_, err := os.Stat("/proc/" + itoa(pid))
	return errors.Is(err, os.ErrNotExist)
}

func TestStdioEverythingServer(t *testing.T) {
	m := newManager(t, nil, nil, nil)
	sk := stdioSkill("everything")
	tools, err := m.Discover(context.Background(), sk)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	mustContain(t, "tools", strings.Join(names, ","), "test_simple_text", "test_tool_with_progress", "test_sampling")

	t.Run("text", func(t *testing.T) {
		res, err := m.CallTool(context.Background(), callOf(sk, "test_simple_text", `{}`))
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "Raw", string(res.Raw), `"type":"text"`)
	})
	t.Run("progress", func(t *testing.T) {
		call := callOf(sk, "test_tool_with_progress", `{}`)
		n := &notifier{}
		call.Notifier = n
		if _, err := m.CallTool(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if len(n.progress) != 3 {
			t.Errorf("progress %v, want 3 notifications", n.progress)
		}
	})
	t.Run("logging", func(t *testing.T) {
		call := callOf(sk, "test_tool_with_logging", `{}`)
		n := &notifier{}
		call.Notifier = n
		if _, err := m.CallTool(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		mustContain(t, "logs", strings.Join(n.logs, "\n"), `info "Tool execution started"`, `info "Tool execution completed"`)
	})
	t.Run("sampling", func(t *testing.T) {
		c := &client{caps: `{"sampling":{}}`, answer: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if !strings.Contains(string(params), "hello there") {
				return nil, &mcpgate.RPCError{Code: -32602, Message: "unexpected params " + string(params)}
			}
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled answer"},"model":"m1","stopReason":"endTurn"}`), nil
		}}
		call := callOf(sk, "test_sampling", `{"prompt":"hello there"}`)
		call.Client = c
		res, err := m.CallTool(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "Raw", string(res.Raw), "sampled answer")
	})
	t.Run("elicitation", func(t *testing.T) {
		c := &client{caps: `{"elicitation":{}}`, answer: func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"action":"accept","content":{"username":"ann","email":"ann@example.test"}}`), nil
		}}
		call := callOf(sk, "test_elicitation", `{"message":"who are you?"}`)
		call.Client, call.SessionID = c, "sess-2"

		res, err := m.CallTool(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "Raw", string(res.Raw), "accept")
	})
	t.Run("no sampling client", func(t *testing.T) {
		res, err := m.CallTool(context.Background(), callOf(sk, "test_sampling", `{"prompt":"x"}`))
		if err == nil && !res.IsError {
			t.Fatalf("sampling without a client succeeded: %s", res.Raw)
		}
	})
}

func TestStdioChildKilledMidCall(t *testing.T) {
	m := newManager(t, nil, nil, nil)
	sk := stdioSkill("everything")
	l := mustLink(t, m, sk)
	pid := childPid(t, l)
	// The sampling tool waits for the host; the host's answer waits for
	// the kill.
	c := &client{caps: `{"sampling":{}}`}
	var ownPid atomic.Int64
	c.answer = func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		l.mu.Lock()
		pid := l.own["sess-1"].s.child.cmd.Process.Pid
		l.mu.Unlock()
		ownPid.Store(int64(pid))
		syscall.Kill(pid, syscall.SIGKILL)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	call := callOf(sk, "test_sampling", `{"prompt":"x"}`)
	call.Client = c
	_, err := m.CallTool(context.Background(), call)
	mustCode(t, err, mcpgate.EUNAVAILABLE)
	waitFor(t, "the killed child reaped", func() bool { return processGone(int(ownPid.Load())) })

	// The pooled child crashes too: the supervisor restarts it.
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the crashed child reaped", func() bool { return processGone(pid) })
	waitFor(t, "a call through a restarted child", func() bool {
		_, err := m.CallTool(context.Background(), callOf(sk, "test_simple_text", `{}`))
		return err == nil
	})
	if newPid := childPid(t, l); newPid == pid {
		t.Errorf("the child was not restarted")
	}
}

func TestCloseKillsProcessGroup(t *testing.T) {
	m := newManager(t, nil, nil, nil)
	// A shell that starts a grandchild in its process group, then serves
	// MCP: Close must take both.
	dir := t.TempDir()
	sk := &mcpgate.Skill{AgentID: "agent1", Name: "sh", Kind: mcpgate.SkillMCP, Command: "/bin/sh",
		Args: []string{"-c", `sleep 300 & echo $! > "$PIDFILE"; exec "$BIN"`},
		Env:  map[string]string{"PIDFILE": dir + "/pid", "BIN": everythingBin}}
	l := mustLink(t, m, sk)
	pid := childPid(t, l)
	raw, err := os.ReadFile(dir + "/pid")
	if err != nil {
		t.Fatal(err)
	}
	var grandchild int
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(raw))), &grandchild); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !processGone(pid) {
		t.Errorf("server %d still exists after Close", pid)
	}
	// The grandchild is not ours to reap (init does), but it must be dead.
	waitFor(t, "the grandchild killed", func() bool {
		b, err := os.ReadFile("/proc/" + itoa(grandchild) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z ")
	})
}
