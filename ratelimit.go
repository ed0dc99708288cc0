package mcpgate

import (
	"context"
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

// Interval is the time one token takes to flow in, at least a nanosecond.
func (l *RateLimit) Interval() time.Duration {
	return max(time.Minute/time.Duration(l.PerMinute), time.Nanosecond)
}

// RateBucketStore keeps token buckets that several gateway processes share,
// so that replicas on one database spend one budget.
type RateBucketStore interface {
	// TakeTokens takes up to want tokens from the bucket at key as of now
	// (a new bucket starts full), atomically, by the rule of
	// RateLimit.Take. It returns how
	// many it took and, when it took none, how long until one is free.
	TakeTokens(ctx context.Context, key string, limit RateLimit, want int64, now time.Time) (taken int64, wait time.Duration, err error)
	// DeleteFullBuckets deletes the buckets that are full again by now:
	// forgetting them changes nothing, since a missing bucket starts full.
	DeleteFullBuckets(ctx context.Context, now time.Time) (int64, error)
}

// Span is how long an empty bucket takes to fill up, capped at about 150
// years so that sums of Unix nanoseconds never overflow.
func (l RateLimit) Span() time.Duration {
	const maxSpan = 5e18
	if l.Burst > maxSpan/int64(l.Interval()) {
		return maxSpan
	}
	return time.Duration(l.Burst) * l.Interval()
}

// Take is the bucket's rule for stores that keep a bucket as one instant,
// tat (Unix nanoseconds), the generic cell rate algorithm's theoretical
// arrival time: the bucket is full when tat is not after now, and each
// token taken moves tat on by one Interval. Up to want tokens are taken as
// long as tat stays within Span of now. It returns how many were taken,
// the new tat, and, when none was, how long until one is free. A clock
// behind the bucket's refills nothing.
func (l RateLimit) Take(tat, now, want int64) (taken, next int64, wait time.Duration) {
	interval, span := int64(l.Interval()), int64(l.Span())
	from := max(tat, now)
	if now+span > from {
		taken = min(want, (now+span-from)/interval)
	}
	if taken == 0 {
		return 0, from, time.Duration(from + interval - span - now)
	}
	return taken, from + taken*interval, 0
}
