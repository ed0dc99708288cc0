package e2e

import (
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// TestDemoOnPostgres runs the demo on PostgreSQL (--db): the TS SDK client
// calls a tool, the CLI makes a key against the same database, and a second
// gateway process (a replica) serves a session the first one opened.
func TestDemoOnPostgres(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	env := postgresEnv(t)
	g := startGateway(t, env, "--demo", "--data-dir", t.TempDir())
	key := mustMatch(t, keyLine, waitFor(t, g.stdout.String, "Claude Desktop"))
	rep, ok := runClient(t, clientPlan{URL: g.URL + "/demo/mcp", Headers: bearer(key),
		Calls: []clientCall{{Name: "convert_currency", Arguments: map[string]any{"amount": 10, "from": "EUR", "to": "GBP"}}}})
	if !ok || rep.Calls[0].Result == nil || rep.Calls[0].Result.IsError {
		t.Fatalf("call on PostgreSQL: %+v %+v", rep.Error, rep.Calls)
	}

	other := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "demo", "--name", "second"))
	s := openSession(t, g.URL+"/demo/mcp", bearer(other))
	replica := startGateway(t, env, "--data-dir", t.TempDir())
	s.url = replica.URL + "/demo/mcp"
	// 8 tools: the demo's delete_invoice, added to show the approval gate,
	// made it 8.
	if names := s.toolNames(); len(names) != 8 {
		t.Errorf("the replica serving a session opened elsewhere listed %v", names)
	}
	// The demo's agent worker is connected to the first gateway only: the
	// call on the replica reaches it, and its reply comes back, through
	// PostgreSQL's LISTEN/NOTIFY.
	r := s.post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"orders","arguments":{"message":"how many rows?"}}}`)
	if !strings.Contains(r.Body, "1200 rows.") {
		t.Errorf("orders through the replica: HTTP %d %s", r.Status, r.Body)
	}
}

// freshDatabase creates an empty database on the test server and returns
// its DSN; the test is skipped without a server.
func freshDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.Database(t, pgtest.Admin(t))
}

// postgresEnv returns the environment of gateways on a fresh database of
// the test server: its DSN, and the secret key that every process on one
// database must share (serve refuses another). The test is skipped
// without a server.
func postgresEnv(t *testing.T) []string {
	t.Helper()
	return []string{"MCPGATE_DB=" + freshDatabase(t), "MCPGATE_SECRET_KEY=" + strings.Repeat("5e", 32)}
}
