package config

import (
	"context"
	"testing"

	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// TestApplyReplicasAtOnce applies the same file from six replicas at once
// on one PostgreSQL database, as replicas started together with the same
// --config do: every one succeeds (the later transactions, which found the
// users and agents the first created, run again and change nothing).
func TestApplyReplicasAtOnce(t *testing.T) {
	const replicas = 6
	dsn := pgtest.Database(t, pgtest.Admin(t))
	const file = `users: [{name: alice}, {name: bob}]
agents:
  - {id: one, owner: alice, mcp_enabled: true}
  - {id: two, owner: bob, mcp_enabled: true}
`
	errs := make(chan error, replicas)
	start := make(chan struct{})
	for range replicas {
		s, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		cfg := mustParse(t, file, nil)
		go func() { <-start; _, err := cfg.Apply(context.Background(), s); errs <- err }()
	}
	close(start)
	for range replicas {
		if err := <-errs; err != nil {
			t.Errorf("a replica's apply failed: %v", err)
		}
	}
}
