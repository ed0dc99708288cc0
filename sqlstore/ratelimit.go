package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TakeTokens refills the bucket at key as of now and takes up to want of
// its tokens, in one transaction that holds the bucket's row, so concurrent
// takers (on any replica) queue and never take the same token twice. A
// clock behind the one that last counted the bucket refills nothing.
func (s *Store) TakeTokens(ctx context.Context, key string, limit mcpgate.RateLimit, want int64, now time.Time) (int64, time.Duration, error) {
	var taken int64
	var wait time.Duration
	err := s.withTx(ctx, func(tx *Store) error {
		tokens, counted, err := tx.lockBucket(ctx, key, limit, now)
		if err != nil {
			return err
		}
		var left float64
		taken, wait, left = limit.Take(tokens, now.Sub(fromMicros(counted)), want)
		at := max(micros(now), counted)
		full := at + int64((float64(limit.Burst)-left)*float64(limit.Interval()/time.Microsecond))
		_, err = tx.write.ExecContext(ctx, `UPDATE rate_buckets SET tokens = $2, counted_at = $3, full_at = $4 WHERE bucket = $1`,
			key, left, at, full)
		if err != nil {
			return fmt.Errorf("update rate bucket: %w", err)
		}
		return nil
	})
	return taken, wait, err
}

// lockBucket returns the bucket's tokens and when they were counted,
// making it full when missing, and holds its row until the transaction
// ends.
func (s *Store) lockBucket(ctx context.Context, key string, limit mcpgate.RateLimit, now time.Time) (float64, int64, error) {
	var tokens float64
	var counted int64
	err := s.write.QueryRowContext(ctx, `INSERT INTO rate_buckets (bucket, tokens, counted_at, full_at) VALUES ($1, $2, $3, $3)
		ON CONFLICT (bucket) DO UPDATE SET bucket = excluded.bucket
		RETURNING tokens, counted_at`, key, float64(limit.Burst), micros(now)).Scan(&tokens, &counted)
	if err != nil {
		return 0, 0, fmt.Errorf("lock rate bucket: %w", err)
	}
	return tokens, counted, nil
}

// DeleteFullBuckets deletes the buckets that are full by now.
func (s *Store) DeleteFullBuckets(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM rate_buckets WHERE full_at <= $1`, micros(now))
	if err != nil {
		return 0, fmt.Errorf("delete full rate buckets: %w", err)
	}
	return res.RowsAffected()
}
