package postgres_test

import (
	"context"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/mcpgate/mcpgate/sqlstore/storetest"
)

func TestStore(t *testing.T) {
	admin := pgtest.Admin(t)
	storetest.Run(t, func(t *testing.T) mcpgate.Store {
		return mustOpen(t, pgtest.Database(t, admin))
	})
}

// mustOpen opens the store on dsn, closing it when the test ends.
func mustOpen(tb testing.TB, dsn string) *sqlstore.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}
