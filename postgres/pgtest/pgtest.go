// Package pgtest gives tests throwaway PostgreSQL databases on the server
// that EnvDSN names, and lets them cut a Broker's listening connection from
// the server side. Tests of every package that runs on PostgreSQL share it,
// so that they create, name and drop their databases the same way.
//
// It is imported by tests only. It must not import any mcpgate package
// other than postgres.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mcpgate/mcpgate/postgres"
)

// EnvDSN names the variable that points the tests at a PostgreSQL server
// they may create and drop databases on; scripts/start-postgres.sh starts
// one and prints it.
const EnvDSN = "MCPGATE_TEST_POSTGRES"

// Admin connects to the server named by EnvDSN, skipping tb when it is not
// set, and closes the connection when tb ends.
func Admin(tb testing.TB) *sql.DB {
	tb.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		tb.Skip(EnvDSN + " is not set; scripts/start-postgres.sh starts a server")
	}
	return Open(tb, dsn)
}

// Open connects to dsn through pgx's database/sql driver and closes the
// connection when tb ends, if the caller has not closed it before.
func Open(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// Database creates an empty database with a random name on admin's server,
// dropped when tb ends, and returns its DSN.
func Database(tb testing.TB, admin *sql.DB) string {
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

// TerminateListeners ends, from the server side, the listening connections
// of the Brokers on dsn's database, and returns how many it ended.
func TerminateListeners(tb testing.TB, admin *sql.DB, dsn string) int {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	var n int
	err = admin.QueryRow(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND datname = $2`,
		postgres.ListenerName, strings.TrimPrefix(u.Path, "/")).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
