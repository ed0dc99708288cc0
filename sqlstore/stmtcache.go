package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
)

// Statement caching. SQLite (modernc) compiles every statement it is given
// as text anew: on the agent round trip that was 23 % of the gateway's CPU
// (sqlite3LockAndPrepare in a profile of e2e's TestAgentLoad). So on an
// engine whose driver does not cache by itself, every query the Store runs
// goes through a statement prepared once per pool, kept by its text. pgx
// caches prepared statements per connection by itself, so the PostgreSQL
// dialect opts out (DriverCachesStatements).

// maxCachedStatements bounds a pool's cache: queries built at run time
// (IN lists of varying length) may have many texts; past the bound they run
// unprepared.
const maxCachedStatements = 512

// maxCachedArgs keeps the long texts built at run time (an inbox stream
// renewing many held messages: one text per count) out of the cache, so
// that they do not fill it with texts rarely run twice.
const maxCachedArgs = 20

// StatementCacher is implemented by a Dialect whose driver caches prepared
// statements itself; the Store then sends it query texts as they are.
type StatementCacher interface {
	DriverCachesStatements() bool
}

// cachesStatements reports whether d's driver caches statements itself.
func cachesStatements(d Dialect) bool {
	c, ok := d.(StatementCacher)
	return ok && c.DriverCachesStatements()
}

// cacheStatements puts s's pools behind statement caches, unless its
// dialect's driver caches statements itself.
func (s *Store) cacheStatements() {
	if cachesStatements(s.d) {
		return
	}
	s.readStmts, s.writeStmts = newStmtCache(s.readDB), newStmtCache(s.writeDB)
	s.read, s.write = cachedDB{c: s.readStmts}, cachedDB{c: s.writeStmts, settle: s.settle}
}

// stmtCache holds the statements prepared on one pool, by query text.
type stmtCache struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}}
}

// lookup returns query's statement, or nil when it is not prepared yet.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

// stmt returns the statement of query, run with nargs arguments,
// preparing it on the pool the first time. It returns nil when query is not
// to be cached (several statements, too many arguments, a full cache) or
// fails to prepare: the caller then runs the text, whose error is the one
// to report.
func (c *stmtCache) stmt(ctx context.Context, query string, nargs int) *sql.Stmt {
	if st := c.lookup(query); st != nil {
		return st
	}
	if nargs > maxCachedArgs || !c.room(query) {
		return nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	return c.keep(query, st)
}

// room reports whether query may be added to the cache.
func (c *stmtCache) room(query string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.stmts) < maxCachedStatements && !strings.Contains(query, ";")
}

// keep stores st as query's statement, unless another goroutine prepared
// it first, and returns the statement kept.
func (c *stmtCache) keep(query string, st *sql.Stmt) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.stmts[query]; old != nil {
		_ = st.Close()
		return old
	}
	c.stmts[query] = st
	return st
}

// prepare prepares the queries that are not cached yet; errors are left
// for the next run of each query to report.
func (c *stmtCache) prepare(ctx context.Context, queries []string) {
	for _, q := range queries {
		c.stmt(ctx, q, 0)
	}
}

// close closes every statement.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}

// cachedDB is a querier over a pool that runs queries through the pool's
// cached statements.
type cachedDB struct {
	c *stmtCache
	// settle, on the writer, commits the transaction posts left open
	// (open.go) before a statement, which would otherwise wait for it.
	settle func()
}

// before readies the pool for a statement.
func (q cachedDB) before() {
	if q.settle != nil {
		q.settle()
	}
}

// ExecContext runs a statement that returns no rows.
func (q cachedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	q.before()
	if st := q.c.stmt(ctx, query, len(args)); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return q.c.db.ExecContext(ctx, query, args...)
}

// QueryContext runs a query that returns rows.
func (q cachedDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q.before()
	if st := q.c.stmt(ctx, query, len(args)); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.c.db.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row, detached
// from ctx's cancellation: a single-row read is short.
func (q cachedDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	q.before()
	ctx = detach(ctx)
	if st := q.c.stmt(ctx, query, len(args)); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return q.c.db.QueryRowContext(ctx, query, args...)
}

// cachedTx is a querier over a transaction on the writer that runs queries
// through the writer's cached statements. A statement cannot be prepared
// on the pool while the transaction holds its connection (SQLite's writer
// has only one), so a query not cached yet runs as text and is noted in
// missed, for withTx to prepare once the transaction is over. A cached
// statement is bound to the transaction once, on its first run, and kept
// in bound for the transaction's later runs: binding makes a new
// statement each time, and the writer's open transaction (open.go) runs
// the same few statements for every post it holds. The transaction
// closes its bound statements when it ends.
type cachedTx struct {
	tx     *sql.Tx
	c      *stmtCache
	missed *[]string
	bound  *boundStmts
}

// boundStmts holds a transaction's bindings of cached statements, by
// query text.
type boundStmts struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// newCachedTx returns the querier of tx through the statements of c.
func newCachedTx(tx *sql.Tx, c *stmtCache, missed *[]string) cachedTx {
	return cachedTx{tx: tx, c: c, missed: missed, bound: &boundStmts{stmts: map[string]*sql.Stmt{}}}
}

// stmt returns query's statement bound to the transaction, or nil after
// noting query as missed (unless its nargs arguments are too many to cache
// it).
func (q cachedTx) stmt(ctx context.Context, query string, nargs int) *sql.Stmt {
	q.bound.mu.Lock()
	defer q.bound.mu.Unlock()
	if st := q.bound.stmts[query]; st != nil {
		return st
	}
	if st := q.c.lookup(query); st != nil {
		st = q.tx.StmtContext(ctx, st)
		q.bound.stmts[query] = st
		return st
	}
	if nargs <= maxCachedArgs {
		*q.missed = append(*q.missed, query)
	}
	return nil
}

// ExecContext runs a statement that returns no rows, detached from ctx's
// cancellation as every statement of a transaction is: a transaction is
// short, and ctx is still checked before each statement.
func (q cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = detach(ctx)
	if st := q.stmt(ctx, query, len(args)); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return q.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a query that returns rows.
func (q cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = detach(ctx)
	if st := q.stmt(ctx, query, len(args)); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return q.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query that returns at most one row.
func (q cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = detach(ctx)
	if st := q.stmt(ctx, query, len(args)); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return q.tx.QueryRowContext(ctx, query, args...)
}

// PrepareContext returns query's statement bound to the transaction anew
// (the caller closes it): the cached one when there is one. Closing it
// leaves the cached one, and the transaction's own binding, open.
func (q cachedTx) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := q.c.lookup(query); st != nil {
		return q.tx.StmtContext(ctx, st), nil
	}
	return q.tx.PrepareContext(ctx, query)
}
