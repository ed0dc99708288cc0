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
	"os"
	"testing"

	"github.com/mcpgate/mcpgate/e2e/cluster"
)

// binary is the mcpgate binary TestMain builds: the replicas and the load
// generator.
var binary string

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, &binary, cluster.MainOptions{Name: "chaos", NeedsPostgres: true}))
}
