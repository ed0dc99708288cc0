package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
	"golang.org/x/time/rate"
)

// sweepEvery is how often a limiter forgets the buckets nobody used lately.
const sweepEvery = time.Minute

// Memory keeps token buckets in this process; buckets idle long enough to
// be full again are evicted, since a missing bucket starts full.
type Memory struct {
	now       func() time.Time
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

// bucket is one caller's token bucket and the last time it was used.
type bucket struct {
	lim   *rate.Limiter
	limit mcpgate.RateLimit
	used  time.Time
}

// NewMemory returns a limiter that reads the time from now (time.Now when
// nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, buckets: map[string]*bucket{}, lastSweep: now()}
}

// Allow takes one token from the bucket at key, refilled at limit. It
// returns 0 when the call may go ahead, else how long until a token is
// free; a refused call takes nothing.
func (m *Memory) Allow(_ context.Context, key string, limit mcpgate.RateLimit) (time.Duration, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bucket(key, limit, now)
	if !b.lim.AllowN(now, 1) {
		return timeToToken(b.lim, now), nil
	}
	if now.Sub(m.lastSweep) >= sweepEvery {
		m.sweep(now)
	}
	return 0, nil
}

// timeToToken returns how long until lim has a token, taking none.
func timeToToken(lim *rate.Limiter, now time.Time) time.Duration {
	r := lim.ReserveN(now, 1)
	defer r.CancelAt(now)
	return r.DelayFrom(now)
}

// bucket returns the bucket at key, made or adjusted to limit.
func (m *Memory) bucket(key string, limit mcpgate.RateLimit, now time.Time) *bucket {
	b := m.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(perSecond(limit), int(limit.Burst)), limit: limit}
		m.buckets[key] = b
	} else if b.limit != limit {
		b.lim.SetLimitAt(now, perSecond(limit))
		b.lim.SetBurstAt(now, int(limit.Burst))
		b.limit = limit
	}
	b.used = now
	return b
}

// sweep evicts the buckets that have had time to fill up since their last
// use.
func (m *Memory) sweep(now time.Time) {
	for key, b := range m.buckets {
		if now.Sub(b.used) >= fillTime(b.limit) {
			delete(m.buckets, key)
		}
	}
	m.lastSweep = now
}

// Len returns how many buckets the limiter holds.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}

// perSecond is the limit's rate in x/time/rate's unit.
func perSecond(l mcpgate.RateLimit) rate.Limit { return rate.Limit(float64(l.PerMinute) / 60) }

// fillTime is how long an empty bucket takes to fill up.
func fillTime(l mcpgate.RateLimit) time.Duration {
	return time.Duration(l.Burst) * l.Interval()
}
