package replicas

import (
	"testing"

	"github.com/mcpgate/mcpgate/e2e/sdkclient"
)

// runNode runs one of e2e's Node scripts with a JSON plan and decodes the
// last line it prints into report; it reports whether the script exited 0.
func runNode(t *testing.T, script string, plan, report any) bool {
	t.Helper()
	return sdkclient.Run(t, e2eDir, script, plan, report)
}

// bearer is the Authorization header of a key.
func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }
