package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// staleClaimConfig has one tool with a 1 s timeout, so that a claim left
// behind goes stale 1 s + 2 s (the pipeline's deadline grace) +
// --idempotency-grace (staleClaimGrace here, 30 s by default) after it was
// made (docs/architecture.md, "A claim left behind").
const staleClaimConfig = `users:
  - name: alice
agents:
  - id: stale
    owner: alice
    mcp_enabled: true
    skills:
      - name: orders
        kind: rest
        base_url: BASE
        allow_private: true
        timeout: 1s
        tools:
          - name: place_order
            input_schema: {type: object, properties: {item: {type: string}}}
            request: {method: POST, path: /orders, body: all}
`

// staleClaimGrace is the gateway's --idempotency-grace in this test,
// shorter than the default to keep the test short.
const staleClaimGrace = "6s"

// staleClaimLife is how long the claim of staleClaimConfig's tool holds
// its key unfinished.
const staleClaimLife = 9 * time.Second

// hangFirst is a REST API whose first request hangs until its client goes
// away; the others answer at once.
type hangFirst struct {
	n       atomic.Int64
	started chan struct{}
}

func (h *hangFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // so that the server notices the client going away
	if h.n.Add(1) == 1 {
		close(h.started)
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"order":%d}`, h.n.Load())
}

// TestStaleClaimAfterKill kills the binary (SIGKILL) in the middle of a
// keyed call and restarts it on the same store: a retry with the key is
// refused as in flight (409) while the claim is younger than the tool's
// deadline plus grace, never hangs, and runs once the claim is older.
func TestStaleClaimAfterKill(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		testStaleClaim(t, []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		testStaleClaim(t, append(postgresEnv(t), "MCPGATE_DATA_DIR="+filepath.Join(t.TempDir(), "data")))
	})
}

func testStaleClaim(t *testing.T, env []string) {
	api := &hangFirst{started: make(chan struct{})}
	backend := httptest.NewServer(api)
	t.Cleanup(backend.Close)
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(staleClaimConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, env, "--config", cfg, "--idempotency-grace", staleClaimGrace)
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	s := openSession(t, g.URL+"/stale/mcp", bearer(key))
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"place_order","arguments":{"item":"tea","idempotency_key":"crash-1"}}}`
	go postIgnoringErrors(s, body) // its gateway dies under it
	select {
	case <-api.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not reach the API")
	}
	claimed := time.Now()
	g.cmd.Process.Kill()
	<-g.done

	g = startGateway(t, env, "--config", cfg, "--idempotency-grace", staleClaimGrace)
	s = openSession(t, g.URL+"/stale/mcp", bearer(key))
	if time.Since(claimed) < staleClaimLife {
		mustCondition(t, "a retry while the claim is fresh", s.post(body), "conflict", 409)
	}
	var r *rpcResponse
	for deadline := time.Now().Add(staleClaimLife + 60*time.Second); ; time.Sleep(time.Second) {
		if r = s.post(body); r.Error == nil || r.Error.Data["reason"] != "conflict" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the claim left by the killed gateway still holds the key after %s: %s", time.Since(claimed), r.Body)
		}
	}
	if r.Error != nil || !strings.Contains(r.Body, `\"order\":2`) {
		t.Fatalf("retry after the claim went stale: %s", r.Body)
	}
	if since := time.Since(claimed); since < staleClaimLife-time.Second {
		t.Errorf("the stale claim was taken over after %s, before its life of %s", since, staleClaimLife)
	}
	if r := s.post(body); !strings.Contains(r.Body, "idempotent_replay") || !strings.Contains(r.Body, `\"order\":2`) {
		t.Fatalf("the retry's result is not kept under the key: %s", r.Body)
	}
}

// postIgnoringErrors sends a message in s whose reply the test does not
// wait for.
func postIgnoringErrors(s *rpcSession, body string) {
	req, _ := http.NewRequest("POST", s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}
