// Package replicas proves that any replica serves any request: three
// replicas of the real binary on one PostgreSQL database behind the
// cluster package's round-robin proxy (no session affinity), driven by the
// official TypeScript SDK client, the conformance suite through a relayed
// upstream, an agent worker, and plain HTTP.
//
// It is a package of its own so that its time does not count against the
// e2e package's. Without MCPGATE_TEST_POSTGRES its tests are skipped.
package replicas

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate/e2e/cluster"
)

// binary is the mcpgate binary TestMain builds; tools holds the helper
// programs built next to it.
var binary, tools string

// e2eDir holds the Node scripts and their node_modules.
const e2eDir = ".."

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpgate-replicas-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, tools = filepath.Join(dir, "mcpgate"), dir
	code := 1
	if os.Getenv("MCPGATE_TEST_POSTGRES") == "" {
		code = m.Run() // every test skips, saying why
	} else if err := cluster.Build(binary); err != nil {
		fmt.Fprintln(os.Stderr, "replicas: build mcpgate:", err)
	} else if err := cluster.EnsureNodeDeps(e2eDir); err != nil {
		fmt.Fprintln(os.Stderr, "replicas:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
