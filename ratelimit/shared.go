package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// LeaseTTL is how long tokens leased from a shared bucket may be spent.
// Tokens a replica leased and did not spend by then lapse: they are never
// handed out twice, so replicas together admit at most the budget, and at
// worst a little less.
const LeaseTTL = time.Second

// Shared keeps token buckets in the database so that every replica spends
// one budget. Each replica leases a small batch of tokens at a time (one
// token for limits up to 600 a minute), so that most calls of a busy caller
// make no round trip, and remembers a refusal until a token is due, so a
// flood of refused calls makes none either.
type Shared struct {
	store  mcpgate.RateBucketStore
	now    func() time.Time
	mu     sync.Mutex
	leases map[string]*lease
	swept  time.Time
}

// lease is what this replica holds of one shared bucket.
type lease struct {
	tokens  int64
	expires time.Time
	// refusedUntil is when the shared bucket, which said it was empty, has
	// a token again.
	refusedUntil time.Time
}

// NewShared returns a limiter over store that reads the time from now
// (time.Now when nil).
func NewShared(store mcpgate.RateBucketStore, now func() time.Time) *Shared {
	if now == nil {
		now = time.Now
	}
	return &Shared{store: store, now: now, leases: map[string]*lease{}, swept: now()}
}

// Allow takes one token from the shared bucket at key, refilled at limit:
// from this replica's lease when it holds one, else from the database. It
// returns 0 when the call may go ahead, else how long until the shared
// bucket has a token.
func (s *Shared) Allow(ctx context.Context, key string, limit mcpgate.RateLimit) (time.Duration, error) {
	now := s.now()
	if wait, ok := s.fromLease(key, now); ok {
		return wait, nil
	}
	taken, wait, err := s.store.TakeTokens(ctx, key, limit, Batch(limit), now)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lease(key)
	if taken == 0 {
		l.refusedUntil = now.Add(wait)
		return wait, nil
	}
	if !now.Before(l.expires) {
		l.tokens = 0
	}
	l.tokens += taken - 1
	l.expires = now.Add(LeaseTTL)
	return 0, nil
}

// fromLease answers from this replica's lease: a leased token, or the
// remembered refusal. ok is false when the database must be asked.
func (s *Shared) fromLease(key string, now time.Time) (wait time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.swept) >= sweepEvery {
		s.sweep(now)
	}
	l := s.leases[key]
	switch {
	case l == nil:
		return 0, false
	case l.tokens > 0 && now.Before(l.expires):
		l.tokens--
		return 0, true
	case now.Before(l.refusedUntil):
		return l.refusedUntil.Sub(now), true
	}
	return 0, false
}

// lease returns the lease at key, made when missing.
func (s *Shared) lease(key string) *lease {
	l := s.leases[key]
	if l == nil {
		l = &lease{}
		s.leases[key] = l
	}
	return l
}

// sweep forgets the leases that have lapsed and refusals that are over.
func (s *Shared) sweep(now time.Time) {
	for key, l := range s.leases {
		if !now.Before(l.expires) && !now.Before(l.refusedUntil) {
			delete(s.leases, key)
		}
	}
	s.swept = now
}

// Batch is how many tokens a replica leases at once: what flows in over
// 100 ms, at least one, and at most a quarter of the burst, so a lease
// rarely outlives LeaseTTL and never holds most of a bucket.
func Batch(l mcpgate.RateLimit) int64 {
	return max(1, min(l.PerMinute/600, l.Burst/4))
}
