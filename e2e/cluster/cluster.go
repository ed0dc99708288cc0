// Package cluster runs several replicas of the real mcpgate binary on one
// PostgreSQL database behind a small round-robin reverse proxy, for
// end-to-end tests of what "any replica serves any request" means: no
// session affinity, every request may reach another replica.
//
// A test builds the binary once (Build, usually from TestMain), then calls
// Start for a Cluster: N replicas of `mcpgate serve`, each with its own data
// dir and port, configured through MCPGATE_* environment variables as the
// container image runs them, sharing the database, the secret key and the
// public URL (the proxy's). Replicas can be killed (SIGKILL), terminated
// (SIGTERM, which drains) and started again on the same port and data dir.
// The proxy probes every replica's /readyz, skips those not ready, and
// retries on the next replica a request whose connection was refused, as a
// load balancer with health checks does; it streams SSE as it comes.
//
// It is used by tests only (e2e/replicas and the chaos test). It must not
// import any mcpgate package: it meets the gateway only as a process.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// Options configures a Cluster. Binary and DSN are required.
type Options struct {
	// Binary is the mcpgate binary to run (see Build).
	Binary string
	// DSN is the PostgreSQL database every replica shares.
	DSN string
	// Replicas is how many replicas to start; 0 means 3.
	Replicas int
	// Args are extra `serve` flags given to every replica.
	Args []string
	// Env are extra environment variables (NAME=value) for every replica
	// and for CLI.
	Env []string
	// ReplicaArgs, when set, returns extra flags for replica i only.
	ReplicaArgs func(i int) []string
	// LogLevel is the replicas' --log-level; empty means info.
	LogLevel string
	// ProbeEvery is how often the proxy probes each replica's /readyz;
	// 0 means 200 ms.
	ProbeEvery time.Duration
	// StartTimeout bounds a replica's start until /readyz answers 200;
	// 0 means 2 minutes (race-detector builds on a loaded machine start
	// slowly).
	StartTimeout time.Duration
}

// Cluster is N running replicas and the proxy in front of them.
type Cluster struct {
	// URL is the proxy's base URL, which is also every replica's public URL.
	URL string
	// Replicas are the replicas, in start order; Replica(i).Index == i.
	Replicas []*Replica
	// Proxy is the round-robin proxy serving URL.
	Proxy *Proxy
	// SecretKey is the --secret-key the replicas share, as 64 hex digits.
	SecretKey string

	opts Options
}

// Start starts the proxy and opts.Replicas replicas, waits until every
// replica is ready, and stops them all when tb ends (with an interrupt,
// which does not drain). On a failed test it logs each replica's stderr.
func Start(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	c, err := newCluster(tb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	errs := make(chan error, len(c.Replicas))
	for _, r := range c.Replicas {
		go func() { errs <- r.Start() }()
	}
	for range c.Replicas {
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// newCluster makes the proxy and the (not yet started) replicas.
func newCluster(tb testing.TB, opts Options) (*Cluster, error) {
	if opts.Binary == "" || opts.DSN == "" {
		return nil, fmt.Errorf("cluster: Options.Binary and Options.DSN are required")
	}
	if opts.Replicas <= 0 {
		opts.Replicas = 3
	}
	c := &Cluster{opts: opts, SecretKey: randomHex(32)}
	c.Proxy = NewProxy(nil)
	srv := httptest.NewServer(c.Proxy)
	c.URL = srv.URL
	for i := range opts.Replicas {
		r, err := c.newReplica(tb, i)
		if err != nil {
			return nil, err
		}
		c.Replicas = append(c.Replicas, r)
	}
	c.Proxy.SetReplicas(c.Replicas)
	stopProbes := c.probe()
	tb.Cleanup(func() { stopProbes(); c.stop(tb); c.Proxy.Close(); srv.Close() })
	return c, nil
}

// probe checks every replica's /readyz each ProbeEvery, as a load
// balancer's health check does, until the returned function is called.
func (c *Cluster) probe() (stop func()) {
	every := c.opts.ProbeEvery
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				for _, r := range c.Replicas {
					r.ready.Store(r.probe(ctx))
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Front serves another round-robin proxy over the same replicas that adds
// header to every request, and returns its base URL; it closes when tb
// ends. Its Host differs from URL's only in the port, which the replicas'
// Host guard does not compare.
func (c *Cluster) Front(tb testing.TB, header http.Header) string {
	p := NewProxy(c.Replicas)
	p.Header = header
	srv := httptest.NewServer(p)
	tb.Cleanup(func() { srv.Close(); p.Close() })
	return srv.URL
}

// stop interrupts every running replica and, on failure, logs their output.
func (c *Cluster) stop(tb testing.TB) {
	for _, r := range c.Replicas {
		if err := r.Stop(); err != nil {
			tb.Errorf("replica %d: %v", r.Index, err)
		}
	}
	if tb.Failed() {
		for _, r := range c.Replicas {
			tb.Logf("replica %d (%s) stderr:\n%s", r.Index, r.Addr, r.Stderr.String())
		}
	}
}

// env is the environment every replica and CLI run with.
func (c *Cluster) env() []string {
	env := append(os.Environ(),
		"MCPGATE_DB="+c.opts.DSN,
		"MCPGATE_SECRET_KEY="+c.SecretKey,
		"MCPGATE_PUBLIC_URL="+c.URL,
	)
	return append(env, c.opts.Env...)
}

// CLI runs an mcpgate admin command against the cluster's database and
// returns its stdout; the error carries stderr.
func (c *Cluster) CLI(args ...string) (string, error) {
	return runCLI(c.opts.Binary, c.env(), args...)
}

// MustCLI is CLI that fails tb on error.
func (c *Cluster) MustCLI(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := c.CLI(args...)
	if err != nil {
		tb.Fatalf("mcpgate %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// Replica returns replica i.
func (c *Cluster) Replica(i int) *Replica { return c.Replicas[i] }

// Get GETs path on the proxy; a helper for probes and API reads.
func (c *Cluster) Get(path string) (*http.Response, error) { return http.Get(c.URL + path) }

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
