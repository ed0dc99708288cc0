package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

// takeTokensSQL applies RateLimit.Take to a bucket in one statement: $1 the
// bucket, $2 now, $3 the interval and $4 the span (nanoseconds), $5 the
// tokens wanted, and $6, $7 the tat and taken of a new bucket. The update's
// expressions all read the row as it was, under the row's lock, so
// concurrent takers on any replica queue and never take a token twice.
const takeTokensSQL = `INSERT INTO rate_buckets (bucket, tat, taken) VALUES ($1, $6, $7)
ON CONFLICT (bucket) DO UPDATE SET
	taken = ` + takenSQL + `,
	tat = ` + fromSQL + ` + CAST($3 AS BIGINT) * ` + takenSQL + `
RETURNING taken, tat`

// fromSQL is when the bucket's next token is counted from: its tat, or now.
const fromSQL = `(CASE WHEN rate_buckets.tat > CAST($2 AS BIGINT) THEN rate_buckets.tat ELSE CAST($2 AS BIGINT) END)`

// takenSQL is how many tokens the take gets: what the span leaves, at most
// $5 (integer division truncates in both engines).
const takenSQL = `(CASE WHEN CAST($2 AS BIGINT) + CAST($4 AS BIGINT) > ` + fromSQL + `
	THEN (CASE WHEN (CAST($2 AS BIGINT) + CAST($4 AS BIGINT) - ` + fromSQL + `) / CAST($3 AS BIGINT) < CAST($5 AS BIGINT)
		THEN (CAST($2 AS BIGINT) + CAST($4 AS BIGINT) - ` + fromSQL + `) / CAST($3 AS BIGINT) ELSE CAST($5 AS BIGINT) END)
	ELSE 0 END)`

// TakeTokens takes up to want tokens from the bucket at key as of now, by
// RateLimit.Take's rule, in one statement (one round trip, no transaction
// of its own).
func (s *Store) TakeTokens(ctx context.Context, key string, limit mcpgate.RateLimit, want int64, now time.Time) (int64, time.Duration, error) {
	t := now.UnixNano()
	firstTaken, firstTat, _ := limit.Take(0, t, want) // a new bucket
	var taken, tat int64
	err := s.write.QueryRowContext(ctx, takeTokensSQL, key, t, int64(limit.Interval()), int64(limit.Span()), want, firstTat, firstTaken).
		Scan(&taken, &tat)
	if err != nil {
		return 0, 0, fmt.Errorf("take rate tokens: %w", err)
	}
	if taken > 0 {
		return taken, 0, nil
	}
	_, _, wait := limit.Take(tat, t, 1)
	return 0, wait, nil
}

// DeleteFullBuckets deletes the buckets that are full by now.
func (s *Store) DeleteFullBuckets(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM rate_buckets WHERE tat <= $1`, now.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("delete full rate buckets: %w", err)
	}
	return res.RowsAffected()
}
