// Package postgres opens the gateway's shared database: PostgreSQL through
// pgx's database/sql adapter, migrated with goose under an advisory lock so
// that replicas starting together don't clash, and served by sqlstore.
//
// The package must not import any mcpgate package other than the root one
// and sqlstore.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// Pool limits. pgx caches each connection's prepared statements, so idle
// connections are worth keeping for a while.
const (
	MaxOpenConns    = 20
	MaxIdleConns    = 10
	ConnMaxIdleTime = 5 * time.Minute
	ConnMaxLifetime = time.Hour
)

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string), brings its schema up to date and returns the store.
func Open(ctx context.Context, dsn string) (*sqlstore.Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres dsn: %w", err)
	}
	return openConfig(ctx, cfg)
}

// openConfig is Open with the connections' configuration parsed.
func openConfig(ctx context.Context, cfg *pgx.ConnConfig) (*sqlstore.Store, error) {
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(MaxOpenConns)
	db.SetMaxIdleConns(MaxIdleConns)
	db.SetConnMaxIdleTime(ConnMaxIdleTime)
	db.SetConnMaxLifetime(ConnMaxLifetime)
	s, err := open(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// open migrates db and wraps it in a store that reads and writes through
// it.
func open(ctx context.Context, db *sql.DB) (*sqlstore.Store, error) {
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return sqlstore.New(ctx, db, db, dialect{})
}
