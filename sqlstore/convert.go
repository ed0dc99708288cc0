package sqlstore

import (
	"database/sql"
	"time"
)

// micros is how a time is stored: Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros reads a stored time back, in UTC.
func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// normalize returns t as the store returns it: UTC, in whole microseconds.
func normalize(t time.Time) time.Time { return fromMicros(micros(t)) }

// nullMicros stores an optional time, NULL when absent.
func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(*t), Valid: true}
}

// timePtr reads an optional time back.
func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// normalizePtr normalizes an optional time.
func normalizePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	n := normalize(*t)
	return &n
}

// nullString stores an optional string, NULL when empty.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface {
	Scan(dest ...any) error
}
