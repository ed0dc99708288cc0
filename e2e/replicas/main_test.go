// Package replicas proves that any replica serves any request: three
// replicas of the real binary on one PostgreSQL database behind the
// cluster package's round-robin proxy (no session affinity), driven by the
// official TypeScript SDK client, the conformance suite through a relayed
// upstream, an agent worker, and plain HTTP.
//
// It is a package of its own so that its time does not count against the
// e2e package's. Without MCPGATE_TEST_POSTGRES its tests are skipped. One
// cluster serves every test; the tests, and the conformance scenarios,
// run four at a time (they wait on processes more than on the CPU).
package replicas

import (
	"os"
	"testing"

	"github.com/mcpgate/mcpgate/e2e/cluster"
)

// binary is the mcpgate binary TestMain builds; tools holds the helper
// programs built next to it.
var binary, tools string

// e2eDir holds the Node scripts and their node_modules.
const e2eDir = ".."

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, &binary, cluster.MainOptions{Name: "replicas", NeedsPostgres: true, NodeDir: e2eDir, Parallel: 4, Dir: &tools}))
}
