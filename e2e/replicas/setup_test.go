package replicas

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/cluster"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// everythingServer is the official Go SDK's conformance fixture.
const everythingServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// env is what every test of the package shares: one cluster of three
// replicas, its key and its backends.
type env struct {
	*cluster.Cluster
	key  string // alice's user key
	root string // an administrator's user key
	rest *restBackend
	dsn  string // the replicas' database
}

// password is every user's password.
const password = "correct horse battery"

// config is the agents every test uses, applied by every replica at start:
//   - tools: REST tools (echo; limited, rate-limited per credential;
//     gated, approved by reviewers; asked, approved by the caller)
//   - everything: the conformance fixture, relayed
//   - helper: an agent skill answered by a worker
const config = `users:
  - name: alice
    password: ${env:ALICE_PASSWORD}
  - name: root
    password: ${env:ALICE_PASSWORD}
    admin: true
agents:
  - id: tools
    owner: alice
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: %[1]s
        allow_private: true
        tools:
          - name: echo
            description: Echo the arguments.
            input_schema: {type: object, properties: {text: {type: string}}}
            request: {method: POST, path: /echo, body: all}
      - name: limited
        kind: rest
        base_url: %[1]s
        allow_private: true
        rate_limit: {per_minute: 6, burst: 6}
        tools:
          - name: limited_echo
            description: Echo, at most six times a minute.
            input_schema: {type: object}
            request: {method: POST, path: /echo, body: all}
      - name: gated
        kind: rest
        base_url: %[1]s
        allow_private: true
        auto_approve: false
        tools:
          - name: gated_echo
            description: Echo once a reviewer approves.
            input_schema: {type: object, properties: {text: {type: string}}}
            request: {method: POST, path: /echo, body: all}
      - name: asked
        kind: rest
        base_url: %[1]s
        allow_private: true
        auto_approve: false
        approval: caller
        tools:
          - name: asked_echo
            description: Echo once the caller approves.
            input_schema: {type: object, properties: {text: {type: string}}}
            request: {method: POST, path: /echo, body: all}
  - id: everything
    owner: alice
    mcp_enabled: true
    skills:
      - name: fixture
        kind: mcp
        url: http://%[2]s/mcp
        allow_private: true
  - id: helper
    owner: alice
    mcp_enabled: true
    skills:
      - name: helper
        kind: agent
        timeout: 60s
`

// restBackend is the REST API behind the tools agent; it counts calls.
type restBackend struct {
	URL   string
	mu    sync.Mutex
	calls int
}

// startREST serves /echo, which answers the JSON body it got, until t
// ends.
func startREST(t *testing.T) *restBackend {
	b := &restBackend{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.calls++
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo":%s}`, orNull(body))
	}))
	t.Cleanup(srv.Close)
	b.URL = srv.URL
	return b
}

// orNull is body, or null when empty.
func orNull(body []byte) string {
	if len(strings.TrimSpace(string(body))) == 0 {
		return "null"
	}
	return string(body)
}

// startEnv starts the backends and three replicas on a fresh database,
// all stopped when t ends; t is skipped without MCPGATE_TEST_POSTGRES.
func startEnv(t *testing.T) *env {
	t.Helper()
	dsn := pgtest.Database(t, pgtest.Admin(t))
	fixture := filepath.Join(tools, "everything-server")
	if err := buildOnce(fixture, everythingServer); err != nil {
		t.Fatal(err)
	}
	addr, err := cluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	startProcess(t, fixture, "-http="+addr, "-stateless=false")
	rest := startREST(t)
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(config, rest.URL, addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cluster.Start(t, cluster.Options{Binary: binary, DSN: dsn, Replicas: 3,
		Env:  []string{"ALICE_PASSWORD=" + password},
		Args: []string{"--config", cfg, "--agent-visibility", "2s", "--reload-every", "30s"}})
	key := strings.TrimSpace(c.MustCLI(t, "key", "create", "--user", "alice"))
	root := strings.TrimSpace(c.MustCLI(t, "key", "create", "--user", "root"))
	return &env{Cluster: c, key: key, root: root, rest: rest, dsn: dsn}
}

// built guards buildOnce.
var built sync.Mutex

// buildOnce builds pkg to out unless out exists.
func buildOnce(out, pkg string) error {
	built.Lock()
	defer built.Unlock()
	if _, err := os.Stat(out); err == nil {
		return nil
	}
	return cluster.BuildPackage(out, pkg)
}

// startProcess starts a helper program, killed when t ends.
func startProcess(t *testing.T, name string, args ...string) *cluster.Buffer {
	t.Helper()
	return startProcessEnv(t, nil, name, args...)
}

// startProcessEnv starts a helper program with env added, killed when t
// ends.
func startProcessEnv(t *testing.T, env []string, name string, args ...string) *cluster.Buffer {
	t.Helper()
	out := &cluster.Buffer{}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), out.String())
		}
	})
	return out
}

// waitUntil polls ok every 100 ms until it holds or d passes.
func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s", what, d)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// mustJSON encodes v.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
