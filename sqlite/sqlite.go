// Package sqlite opens the gateway's embedded database: a SQLite file
// through the pure-Go modernc.org/sqlite driver, migrated with goose and
// served by sqlstore.
//
// A database has two pools: a writer of exactly one connection, so that
// writes queue in Go instead of failing with "database is locked", and a
// pool of query-only readers, which WAL mode lets read while the writer
// writes. Several processes (the server and an admin command) may open the
// same file at once; busy_timeout and immediate transactions make them wait
// for each other's writes.
//
// The package must not import any mcpgate package other than the root one
// and sqlstore.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"

	"github.com/mcpgate/mcpgate/sqlstore"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// BusyTimeoutMS is how long a connection waits for another process's write
// lock before failing.
const BusyTimeoutMS = 5000

// Open opens (creating it and its directory when missing) the SQLite
// database at path, brings its schema up to date and returns the store.
func Open(ctx context.Context, path string) (*sqlstore.Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite path %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("create directory of %s: %w", abs, err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, err
	}
	write, err := openWriter(ctx, abs)
	if err != nil {
		return nil, err
	}
	read, err := openReader(ctx, abs)
	if err != nil {
		_ = write.Close()
		return nil, err
	}
	s, err := sqlstore.New(ctx, read, write, dialect{})
	if err != nil {
		_ = read.Close()
		_ = write.Close()
		return nil, err
	}
	c, err := startCheckpointer(ctx, abs)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	s.OnClose(c)
	return s, nil
}

// createPrivate creates the database file readable by its owner only, as
// it holds password hashes and session ids; SQLite gives its -wal and -shm
// files the same mode. An existing file keeps its mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

// openWriter opens the one-connection writer pool and migrates the schema.
func openWriter(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path,
		"_txlock", "immediate", // take the write lock at BEGIN, not at the first write
		"_journal_mode", "WAL",
		"_synchronous", "NORMAL",
		"_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstopPages), // see checkpoint.go
	))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err := migrate(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return db, nil
}

// openReader opens the pool of query-only connections.
func openReader(ctx context.Context, path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, "_query_only", "1"))
	if err != nil {
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	return db, nil
}

// dsn returns the file URI of path with the settings every connection
// needs and the extra key/value pairs given.
func dsn(path string, extra ...string) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(BusyTimeoutMS))
	q.Set("_foreign_keys", "1")
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}
