package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// deleteRow runs a DELETE of one row by its key, returning notFound when
// there was none.
func (s *Store) deleteRow(ctx context.Context, notFound error, query string, key ...any) error {
	res, err := s.write.ExecContext(ctx, query, key...)
	if err != nil {
		return fmt.Errorf("delete %v: %w", key, err)
	}
	return affected(res, notFound)
}

// affected returns notFound when res changed no row.
func affected(res sql.Result, notFound error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("rows affected: %w", err)
	} else if n == 0 {
		return notFound
	}
	return nil
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	return out, nil
}

// where builds a WHERE clause of equalities, skipping empty values.
type where struct {
	conds []string
	args  []any
}

// equal adds "column = value" unless value is empty.
func (w *where) equal(column, value string) {
	if value == "" {
		return
	}
	w.args = append(w.args, value)
	w.conds = append(w.conds, fmt.Sprintf("%s = $%d", column, len(w.args)))
}

// String returns the clause with a leading space, or "" when it is empty.
func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}
