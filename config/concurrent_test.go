package config

import (
	"context"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// TestApplyConcurrently applies one file from several stores on one fresh
// PostgreSQL database at once, as replicas starting together do: each
// finds the users and agents missing, all but one lose the race to create
// them, and every apply must still succeed.
func TestApplyConcurrently(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t, pgtest.Admin(t))
	ctx := context.Background()
	const replicas = 4
	example := mustRead(t, "example.yaml")
	errs := make(chan error, replicas)
	var wg sync.WaitGroup
	for range replicas {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		cfg := mustParse(t, example, exampleEnv)
		wg.Go(func() {
			_, err := cfg.Apply(ctx, s)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Apply: %v", err)
		}
	}
}
