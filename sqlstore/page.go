package sqlstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Page sizes of the newest-first listings (calls, approvals, tasks).
const (
	defaultPage = 100
	maxPage     = 1000
)

// pageSize returns how many rows a page asked for limit holds:
// defaultPage when limit is unset, maxPage at most.
func pageSize(limit int) int {
	if limit <= 0 {
		return defaultPage
	}
	return min(limit, maxPage)
}

// listPage runs query, a SELECT of the table's rows newest first by
// (column, id), for one page of at most limit rows (see pageSize), and
// returns them with the cursor of the next page ("" on the last). at
// gives a row's time and id.
func listPage[T any](ctx context.Context, s *Store, what, query string, args []any, limit int,
	scan func(scanner) (T, error), at func(T) (time.Time, string)) ([]T, string, error) {
	limit = pageSize(limit)
	rows, err := s.read.QueryContext(ctx, query+fmt.Sprintf(` LIMIT %d`, limit+1), args...)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", what, err)
	}
	page, err := collect(rows, scan)
	if err != nil || len(page) <= limit {
		return page, "", err
	}
	return page[:limit], encodeCursor(at(page[limit-1])), nil
}

// after adds the condition of the page after cursor in a listing newest
// first by (column, id); EINVALID when cursor is not one listPage gave.
func (w *where) after(column, cursor string) error {
	at, id, err := decodeCursor(cursor)
	if err != nil {
		return err
	}
	w.args = append(w.args, at, id)
	n := len(w.args)
	w.conds = append(w.conds, fmt.Sprintf("(%s < $%d OR (%s = $%d AND id < $%d))", column, n-1, column, n-1, n))
	return nil
}

// encodeCursor names the position after the row of time t and id.
func encodeCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(micros(t), 10) + ":" + id))
}

// decodeCursor reads a cursor of encodeCursor.
func decodeCursor(cursor string) (int64, string, error) {
	bad := mcpgate.Errorf(mcpgate.EINVALID, "cursor %q is not one this listing gave", cursor)
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, "", bad
	}
	at, id, ok := strings.Cut(string(b), ":")
	v, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", bad
	}
	return v, id, nil
}
