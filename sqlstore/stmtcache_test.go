package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // a real engine for the cache's own tests; the package itself imports no driver
)

// plainDialect is a Dialect for a bare SQLite file, whose driver compiles
// each text anew.
type plainDialect struct{ caches bool }

func (plainDialect) Violation(error) Violation                 { return Violation{} }
func (plainDialect) JSONListHolds(doc, key, val string) string { return "" }
func (d plainDialect) DriverCachesStatements() bool            { return d.caches }

// mustBareStore opens a Store over a new SQLite file holding one table,
// with a single writer connection as the sqlite package opens it.
func mustBareStore(t *testing.T, d Dialect) *Store {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	s := &Store{read: db, write: db, d: d, readDB: db, writeDB: db}
	s.cacheStatements()
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// cached reports whether the writer's cache holds query.
func cached(s *Store, query string) bool { return s.writeStmts.lookup(query) != nil }

// TestStatementCacheOutsideTx: a query run on the pool is prepared once and
// kept; a text of several statements is not.
func TestStatementCacheOutsideTx(t *testing.T) {
	ctx := context.Background()
	s := mustBareStore(t, plainDialect{})
	const insert = `INSERT INTO t (v) VALUES ($1)`
	for range 3 {
		if _, err := s.write.ExecContext(ctx, insert, "a"); err != nil {
			t.Fatal(err)
		}
	}
	if !cached(s, insert) || len(s.writeStmts.stmts) != 1 {
		t.Errorf("cache holds %d statements, want the insert alone", len(s.writeStmts.stmts))
	}
	const two = `UPDATE t SET v = 'b'; UPDATE t SET v = 'c'`
	if _, err := s.write.ExecContext(ctx, two); err != nil {
		t.Fatal(err)
	}
	if cached(s, two) {
		t.Error("a text of two statements was cached")
	}
}

// TestStatementCacheInTx: a query a transaction runs before it is cached
// runs as text and is prepared once the transaction ended (the writer's only
// connection is free again); the next transaction runs it prepared. A
// transaction that panics leaves the writer usable.
func TestStatementCacheInTx(t *testing.T) {
	ctx := context.Background()
	s := mustBareStore(t, plainDialect{})
	const count = `SELECT COUNT(*) FROM t WHERE v = $1`
	read := func(tx *Store) error {
		var n int
		return tx.read.QueryRowContext(ctx, count, "a").Scan(&n)
	}
	if err := s.withTx(ctx, func(tx *Store) error {
		if cached(s, count) {
			t.Error("cached before its first run")
		}
		return read(tx)
	}); err != nil {
		t.Fatal(err)
	}
	if !cached(s, count) {
		t.Fatal("not prepared after the transaction that missed it")
	}
	var missed []string
	tx, err := s.writeDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := read(s.txStore(tx, &missed)); err != nil || len(missed) != 0 {
		t.Errorf("second run: err %v, missed %q", err, missed)
	}
	_ = tx.Rollback()
	mustRecoverPanic(t, func() {
		_ = s.withTx(ctx, func(tx *Store) error {
			_, _ = tx.write.ExecContext(ctx, `DELETE FROM t WHERE v = 'zz'`)
			panic("boom")
		})
	})
	if _, err := s.write.ExecContext(ctx, `INSERT INTO t (v) VALUES ($1)`, "after"); err != nil {
		t.Fatal(err)
	}
}

// TestStatementBoundOnceInTx: a transaction binds a cached statement on its
// first run and runs the same binding after; a statement PrepareContext
// returns is the caller's to close, which leaves that binding working.
func TestStatementBoundOnceInTx(t *testing.T) {
	ctx := context.Background()
	s := mustBareStore(t, plainDialect{})
	const insert = `INSERT INTO t (v) VALUES ($1)`
	if _, err := s.write.ExecContext(ctx, insert, "cached"); err != nil {
		t.Fatal(err)
	}
	tx, err := s.writeDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var missed []string
	q := s.txStore(tx, &missed).write.(cachedTx)
	first := q.stmt(ctx, insert, 1)
	if first == nil || q.stmt(ctx, insert, 1) != first {
		t.Fatal("the second run of a cached statement in one transaction did not take the first's binding")
	}
	st, err := q.PrepareContext(ctx, insert)
	if err != nil || st == first {
		t.Fatalf("PrepareContext returned the transaction's own binding (%v), which its caller closes", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b"} {
		if _, err := q.ExecContext(ctx, insert, v); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 3 {
		t.Errorf("the transaction holds %d rows (%v), want 3", n, err)
	}
}

// TestStatementCacheBound: past maxCachedStatements texts, queries still run,
// unprepared.
func TestStatementCacheBound(t *testing.T) {
	ctx := context.Background()
	s := mustBareStore(t, plainDialect{})
	for i := range maxCachedStatements + 10 {
		var n int
		if err := s.read.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d`, i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d = %d, %v", i, n, err)
		}
	}
	if got := len(s.readStmts.stmts); got != maxCachedStatements {
		t.Errorf("cache holds %d statements, want %d", got, maxCachedStatements)
	}
}

// TestStatementCacheLongTexts: a query with more than maxCachedArgs
// arguments (a text built for a count of IDs) runs unprepared, in a
// transaction or not.
func TestStatementCacheLongTexts(t *testing.T) {
	ctx := context.Background()
	s := mustBareStore(t, plainDialect{})
	args := make([]any, maxCachedArgs+1)
	marks := make([]string, len(args))
	for i := range args {
		args[i], marks[i] = i, fmt.Sprintf("$%d", i+1)
	}
	query := `SELECT COUNT(*) FROM t WHERE id IN (` + strings.Join(marks, ", ") + `)`
	var n int
	if err := s.read.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := s.withTx(ctx, func(tx *Store) error { return tx.write.QueryRowContext(ctx, query, args...).Scan(&n) }); err != nil {
		t.Fatal(err)
	}
	if s.readStmts.lookup(query) != nil || cached(s, query) {
		t.Errorf("a query of %d arguments was cached", len(args))
	}
}

// TestStatementCacheOptOut: a dialect whose driver caches statements gets
// no cache.
func TestStatementCacheOptOut(t *testing.T) {
	s := mustBareStore(t, plainDialect{caches: true})
	if s.readStmts != nil || s.writeStmts != nil {
		t.Error("a cache was made for a driver that caches by itself")
	}
}

// mustRecoverPanic runs fn, which must panic.
func mustRecoverPanic(t *testing.T, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	fn()
}
