package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// TestReplicasMigrateTogether opens the same new database from four
// "replicas" at once: the migration lock lets exactly one migrate and the
// others must start cleanly on the result.
func TestReplicasMigrateTogether(t *testing.T) {
	dsn := pgtest.Database(t, pgtest.Admin(t))
	const replicas = 4
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i := range replicas {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), dsn)
			if err == nil {
				err = s.Ping(context.Background())
				_ = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	if _, err := mustOpen(t, dsn).Generation(context.Background()); err != nil {
		t.Fatal(err)
	}
}
