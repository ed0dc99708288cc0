package mcpgate

import (
	"context"
	"math"
	"time"
)

// RateLimit is a token bucket: PerMinute tokens flow in each minute, and
// the bucket holds at most Burst, so Burst calls may come at once and
// PerMinute in any minute after that.
type RateLimit struct {
	PerMinute int64 `json:"per_minute"`
	Burst     int64 `json:"burst"`
}

// Validate returns EINVALID unless both numbers are positive.
func (l *RateLimit) Validate() error {
	switch {
	case l.PerMinute < 1:
		return Errorf(EINVALID, "rate_limit.per_minute must be a positive integer, not %d", l.PerMinute)
	case l.Burst < 1:
		return Errorf(EINVALID, "rate_limit.burst must be at least 1, not %d", l.Burst)
	}
	return nil
}

// Interval is the time one token takes to flow in.
func (l *RateLimit) Interval() time.Duration { return time.Minute / time.Duration(l.PerMinute) }

// RateBucketStore keeps token buckets that several gateway processes share,
// so that replicas on one database spend one budget.
type RateBucketStore interface {
	// TakeTokens refills the bucket at key as of now (a new bucket starts
	// full) and takes up to want tokens from it, atomically. It returns how
	// many it took and, when it took none, how long until one is free.
	TakeTokens(ctx context.Context, key string, limit RateLimit, want int64, now time.Time) (taken int64, wait time.Duration, err error)
	// DeleteFullBuckets deletes the buckets that are full again by now:
	// forgetting them changes nothing, since a missing bucket starts full.
	DeleteFullBuckets(ctx context.Context, now time.Time) (int64, error)
}

// Take is the bucket's rule, for stores that keep a bucket as its tokens
// and the time they were counted: tokens, counted elapsed ago, refill at
// the limit's rate up to its burst; then up to want whole tokens are taken.
// It returns how many were taken, how long until one is free when none
// was, and the tokens left.
func (l RateLimit) Take(tokens float64, elapsed time.Duration, want int64) (taken int64, wait time.Duration, left float64) {
	perNano := float64(l.PerMinute) / float64(time.Minute)
	tokens = min(float64(l.Burst), tokens+float64(max(elapsed, 0))*perNano)
	taken = min(want, int64(tokens+1e-9)) // a token due now is not lost to rounding
	if taken > 0 {
		return taken, 0, tokens - float64(taken)
	}
	return 0, time.Duration(math.Ceil((1 - tokens) / perNano)), tokens
}
