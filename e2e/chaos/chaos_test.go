package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/cluster"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// config is one agent with one REST tool whose input schema declares
// idempotency_key, so that the gateway passes the key on to the backend.
// Its 2 s timeout, with the pipeline's 2 s grace and --idempotency-grace
// 1s, makes a claim left by a killed replica stale after 5 s (claimLife).
const config = `users:
  - name: alice
agents:
  - id: chaos
    owner: alice
    mcp_enabled: true
    skills:
      - name: ledger
        kind: rest
        base_url: %s
        allow_private: true
        timeout: 2s
        tools:
          - name: record
            description: Record an entry, once per idempotency key.
            input_schema: {type: object, properties: {idempotency_key: {type: string}, note: {type: string}}, required: [idempotency_key]}
            request: {method: POST, path: /record, body: all}
`

// serveArgs are every replica's flags besides the config: a short claim
// grace (see config) and a drain that lets the proxy's probes, every
// 200 ms, take a draining replica out well before its listener closes.
var serveArgs = []string{"--idempotency-grace", "1s", "--drain-delay", "2s", "--drain-timeout", "10s"}

// claimLife is how long the claim of a call cut by the kill holds its key.
const claimLife = 5 * time.Second

// killSlack is how long after the killed replica is gone the failures of
// the calls it had in flight may still surface at the client.
const killSlack = 3 * time.Second

// plan is the chaos run's shape: steps a phase apart, under load from
// sessions sessions. MCPGATE_CHAOS_PHASE and MCPGATE_CHAOS_SESSIONS change
// it (scripts/chaos.sh).
type plan struct {
	phase    time.Duration
	sessions int
}

// planFromEnv returns the default plan (5 s phases, 8 sessions: about 25 s
// of load) or the one the environment asks for.
func planFromEnv(t *testing.T) plan {
	p := plan{phase: 5 * time.Second, sessions: 8}
	if v := os.Getenv("MCPGATE_CHAOS_PHASE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Second {
			t.Fatalf("MCPGATE_CHAOS_PHASE=%q: want a duration of at least 5s, so that the kill window ends before the SIGTERM", v)
		}
		p.phase = d
	}
	if v := os.Getenv("MCPGATE_CHAOS_SESSIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("MCPGATE_CHAOS_SESSIONS=%q: want a positive number", v)
		}
		p.sessions = n
	}
	return p
}

// timeline is when each step happened.
type timeline struct {
	start              time.Time
	kill, killed       time.Time // SIGKILL sent to replica 1; the process gone
	term, termed       time.Time // SIGTERM sent to replica 2; the drain over
	restart, restarted time.Time // both started again; both ready
	end                time.Time // the load's end
	served             []int64   // requests each replica had served when both were ready again
}

// TestChaos runs steady keyed load through the proxy over three replicas,
// kills replica 1 with SIGKILL, terminates replica 2 with SIGTERM, starts
// both again, and checks: only calls in flight on the killed replica
// failed, each was retried with its key until it succeeded, no session
// was lost, and the backend got a key twice only for a call the killed
// replica had sent before it died (its claim went stale, and the retry ran
// it; the backend answered from its first execution). It logs the run's
// numbers, docs/operations.md's "Chaos test".
func TestChaos(t *testing.T) {
	p := planFromEnv(t)
	backend := startCounter(t)
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, config, backend.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cluster.Start(t, cluster.Options{Binary: binary, DSN: pgtest.Database(t, pgtest.Admin(t)), Replicas: 3,
		LogLevel: "warn", Args: append([]string{"--config", cfg}, serveArgs...)})
	key := strings.TrimSpace(c.MustCLI(t, "key", "create", "--user", "alice"))

	var tl timeline
	tl.start = time.Now()
	run := startLoad(t, c.URL+"/chaos/mcp", key, p.sessions, 5*p.phase)
	disrupt(t, c, p, &tl)
	rep := run.wait(t, 5*p.phase+3*time.Minute)
	tl.end = tl.start.Add(5 * p.phase)
	got := backend.snapshot()
	logReport(t, c, rep, got, &tl)
	checkFailures(t, rep, &tl)
	checkDeliveries(t, rep, got, &tl)
}

// disrupt kills replica 1 one phase in, terminates replica 2 a phase
// later, and starts both again a phase after that, noting the times.
func disrupt(t *testing.T, c *cluster.Cluster, p plan, tl *timeline) {
	t.Helper()
	time.Sleep(time.Until(tl.start.Add(p.phase)))
	tl.kill = time.Now()
	if err := c.Replica(1).Kill(); err != nil {
		t.Fatal(err)
	}
	tl.killed = time.Now()
	time.Sleep(time.Until(tl.start.Add(2 * p.phase)))
	tl.term = time.Now()
	if err := c.Replica(2).Term(); err != nil {
		t.Fatal(err)
	}
	tl.termed = time.Now()
	time.Sleep(time.Until(tl.start.Add(3 * p.phase)))
	tl.restart = time.Now()
	errs := make(chan error, 2)
	for _, i := range []int{1, 2} {
		go func() { errs <- c.Replica(i).Start() }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	tl.restarted = time.Now()
	for _, r := range c.Replicas {
		tl.served = append(tl.served, r.Served())
	}
}
