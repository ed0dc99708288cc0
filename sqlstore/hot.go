package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// hotQueries run on every authenticated request. They are prepared once on
// the reader, which saves SQLite from compiling them each time: a lookup
// took about 12 µs instead of 24 µs (BenchmarkFindKeyByHash in the sqlite
// package). pgx caches prepared statements by itself, so on PostgreSQL it
// makes no measurable difference.
func hotQueries() []string {
	return []string{keyByHashQuery, sessionByIDQuery}
}

// hotWrites run on every call with an idempotency key: claiming the key and
// storing the result. They are prepared once on the writer, which saves
// SQLite compiling each of them on every keyed call.
func hotWrites() []string {
	return []string{claimIdempotencyQuery, completeIdempotencyQuery}
}

// hotStatements maps each hot query's text to its prepared statement. It is
// not changed after New.
type hotStatements map[string]*sql.Stmt

// prepareHot prepares queries on db.
func prepareHot(ctx context.Context, db *sql.DB, queries []string) (hotStatements, error) {
	h := hotStatements{}
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			_ = h.close()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		h[q] = st
	}
	return h, nil
}

// close closes every prepared statement.
func (h hotStatements) close() error {
	var errs []error
	for _, st := range h {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// queryRow runs a single-row read, through its prepared statement when it
// has one.
func (s *Store) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st, ok := s.hot[query]; ok {
		return st.QueryRowContext(detach(ctx), args...)
	}
	return s.read.QueryRowContext(ctx, query, args...)
}

// exec runs a write, through its prepared statement when it has one.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st, ok := s.hotWrite[query]; ok {
		s.settle()
		return st.ExecContext(ctx, args...)
	}
	return s.write.ExecContext(ctx, query, args...)
}
