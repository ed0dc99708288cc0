package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAgentLoad measures the round trip host → gateway → agent worker →
// gateway → host on loopback with a pull worker (testagent -mode echo, so
// the agent's own work is nil): MCPGATE_AGENT_LOAD=SESSIONSxCALLS runs
// that many concurrent MCP sessions, each making its calls one after
// another, and prints p50/p99 latency and calls/s, on SQLite and, with
// MCPGATE_TEST_POSTGRES set, on PostgreSQL. scripts/agent-load.sh runs it.
func TestAgentLoad(t *testing.T) {
	spec := os.Getenv("MCPGATE_AGENT_LOAD")
	if spec == "" {
		t.Skip("MCPGATE_AGENT_LOAD not set (SESSIONSxCALLS, like 16x100)")
	}
	sessions, calls, err := parseLoad(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("sqlite", func(t *testing.T) { runAgentLoad(t, nil, sessions, calls) })
	t.Run("postgres", func(t *testing.T) {
		runAgentLoad(t, []string{"MCPGATE_DB=" + freshDatabase(t)}, sessions, calls)
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
// worker, runs the sessions and logs the figures.
func runAgentLoad(t *testing.T, env []string, sessions, calls int) {
	g := startAgentGateway(t, []agentSkill{{id: "echo", skill: "echo", timeout: "30s"}}, env...)
	startAgentWorker(t, g, "./testagent", "echo", "-mode", "echo", "-concurrency", strconv.Itoa(2*sessions))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * sessions}}
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for s := range sessions {
		wg.Go(func() {
			d, err := loadSession(client, g.mcpURL("echo"), g.userKey, s, calls)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			lat = append(lat, d...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	if len(lat) == 0 {
		t.Fatal("no call succeeded")
	}
	t.Logf("%d sessions x %d calls: %d calls in %v: %.0f calls/s, p50 %v, p99 %v, max %v",
		sessions, calls, len(lat), elapsed.Round(time.Millisecond), float64(len(lat))/elapsed.Seconds(),
		pct(lat, 50), pct(lat, 99), lat[len(lat)-1])
}

// pct returns the p-th percentile of sorted durations.
func pct(sorted []time.Duration, p int) time.Duration {
	return sorted[min(len(sorted)-1, len(sorted)*p/100)].Round(10 * time.Microsecond)
}

// loadSession opens an MCP session and makes calls of the echo agent's
// chat tool one after another, returning each call's latency.
func loadSession(client *http.Client, url, key string, n, calls int) ([]time.Duration, error) {
	h := http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	resp, _, err := rpc(client, url, h, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
	if err != nil {
		return nil, err
	}
	h.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
	h.Set("MCP-Protocol-Version", "2025-11-25")
	if _, _, err := rpc(client, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return nil, err
	}
	var lat []time.Duration
	for i := range calls {
		text := fmt.Sprintf("session %d call %d", n, i)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, i+1, text)
		t0 := time.Now()
		_, b, err := rpc(client, url, h, body)
		if err != nil {
			return lat, err
		}
		if !bytes.Contains(b, []byte("echo: "+text)) {
			return lat, fmt.Errorf("call %d of session %d answered %s", i, n, b)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat, nil
}

// rpc posts one JSON-RPC message and returns the response and the last
// JSON body in it (an SSE stream's last event, or the plain body).
func rpc(client *http.Client, url string, h http.Header, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header = h.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode >= 300 {
		return nil, nil, fmt.Errorf("HTTP %d %s: %v", resp.StatusCode, b, err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = lastEventData(b)
	}
	if len(b) > 0 && !json.Valid(b) {
		return nil, nil, fmt.Errorf("not JSON: %s", b)
	}
	return resp, b, nil
}
