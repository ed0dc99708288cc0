// Package chaos is the chaos test of issue 18: three replicas of the real
// binary on one PostgreSQL database behind the cluster package's
// round-robin proxy, under steady load from the real `mcpgate load` (one
// fresh idempotency key per call, failed calls retried with their key,
// lost sessions followed), while one replica is killed with SIGKILL,
// another is terminated with SIGTERM (a drain), and both are started
// again. A REST backend in the test counts the deliveries and executions
// of every key.
//
// It is a package of its own, with its own go test time budget. Without
// MCPGATE_TEST_POSTGRES its test is skipped. scripts/chaos.sh runs it
// standalone with longer phases. It meets the gateway only as processes
// and over HTTP: it must not import any mcpgate package but e2e/cluster
// and postgres/pgtest.
package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate/e2e/cluster"
)

// binary is the mcpgate binary TestMain builds: the replicas and the load
// generator.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpgate-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mcpgate")
	code := 1
	if os.Getenv("MCPGATE_TEST_POSTGRES") == "" {
		code = m.Run() // the test skips, saying why
	} else if err := cluster.Build(binary); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: build mcpgate:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
