package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/mcpgate/mcpgate/sqlstore/storetest"
)

// EnvDSN names the variable that points the tests at a PostgreSQL server
// they may create and drop databases on; scripts/start-postgres.sh starts
// one and prints it.
const EnvDSN = "MCPGATE_TEST_POSTGRES"

func TestStore(t *testing.T) {
	admin := mustAdmin(t)
	storetest.Run(t, func(t *testing.T) mcpgate.Store {
		return mustOpen(t, mustDatabase(t, admin))
	})
}

// mustAdmin connects to the server named by EnvDSN, skipping the test when
// it is not set.
func mustAdmin(tb testing.TB) *sql.DB {
	tb.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		tb.Skip(EnvDSN + " is not set; scripts/start-postgres.sh starts a server")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// mustDatabase creates an empty database with a random name, dropped when
// the test ends, and returns its DSN.
func mustDatabase(tb testing.TB, admin *sql.DB) string {
	tb.Helper()
	ctx := context.Background()
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "mcpgate_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Error(err)
		}
	})
	u, err := url.Parse(os.Getenv(EnvDSN))
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
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
