package ratelimit

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// clock is a fake clock the tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// limiter is what both limiters offer.
type limiter interface {
	Allow(ctx context.Context, key string, limit mcpgate.RateLimit) (time.Duration, error)
}

// mustAllow fails unless n calls at key are admitted.
func mustAllow(t *testing.T, l limiter, key string, limit mcpgate.RateLimit, n int) {
	t.Helper()
	for i := range n {
		wait, err := l.Allow(context.Background(), key, limit)
		if err != nil || wait != 0 {
			t.Fatalf("call %d of %d: wait %v, err %v; want it admitted", i+1, n, wait, err)
		}
	}
}

// mustRefuse fails unless a call at key is refused with the given wait.
func mustRefuse(t *testing.T, l limiter, key string, limit mcpgate.RateLimit, want time.Duration) {
	t.Helper()
	wait, err := l.Allow(context.Background(), key, limit)
	if err != nil {
		t.Fatal(err)
	}
	if diff := wait - want; wait == 0 || math.Abs(float64(diff)) > float64(time.Millisecond) {
		t.Fatalf("wait = %v, want %v", wait, want)
	}
}

// limiters runs fn on a Memory and on a Shared over a fake store, each on
// its own fake clock.
func limiters(t *testing.T, fn func(t *testing.T, l limiter, c *clock)) {
	t.Run("memory", func(t *testing.T) {
		c := newClock()
		fn(t, NewMemory(c.Now), c)
	})
	t.Run("shared", func(t *testing.T) {
		c := newClock()
		fn(t, NewShared(newFakeStore(), c.Now), c)
	})
}

func TestBurstThenRate(t *testing.T) {
	limit := mcpgate.RateLimit{PerMinute: 60, Burst: 3}
	limiters(t, func(t *testing.T, l limiter, c *clock) {
		mustAllow(t, l, "k", limit, 3)
		mustRefuse(t, l, "k", limit, time.Second)
		c.Add(400 * time.Millisecond)
		mustRefuse(t, l, "k", limit, 600*time.Millisecond) // the true time left, and a refusal takes nothing
		c.Add(600 * time.Millisecond)
		mustAllow(t, l, "k", limit, 1)
		mustRefuse(t, l, "k", limit, time.Second)
		c.Add(time.Hour)
		mustAllow(t, l, "k", limit, 3) // full again, never more than the burst
		mustRefuse(t, l, "k", limit, time.Second)
	})
}

func TestKeysAreSeparate(t *testing.T) {
	limit := mcpgate.RateLimit{PerMinute: 1, Burst: 1}
	limiters(t, func(t *testing.T, l limiter, c *clock) {
		mustAllow(t, l, "a", limit, 1)
		mustRefuse(t, l, "a", limit, time.Minute)
		mustAllow(t, l, "b", limit, 1)
	})
}

func TestMemoryEvictsFullBuckets(t *testing.T) {
	c := newClock()
	m := NewMemory(c.Now)
	limit := mcpgate.RateLimit{PerMinute: 60, Burst: 10}
	mustAllow(t, m, "idle", limit, 10)
	c.Add(5 * time.Second)
	mustAllow(t, m, "busy", limit, 1)
	c.Add(56 * time.Second) // idle is full after 10 s; busy was used 56 s ago
	mustAllow(t, m, "other", limit, 1)
	if m.Len() != 1 {
		t.Fatalf("%d buckets kept, want only the one just used", m.Len())
	}
	mustAllow(t, m, "idle", limit, 10)
	mustRefuse(t, m, "idle", limit, time.Second)
}

// TestSharedLeases checks that a replica takes a batch at a time and asks
// the store nothing while it holds a lease or a refusal.
func TestSharedLeases(t *testing.T) {
	c := newClock()
	store := newFakeStore()
	s := NewShared(store, c.Now)
	limit := mcpgate.RateLimit{PerMinute: 6000, Burst: 40} // batch 10
	mustAllow(t, s, "k", limit, 40)
	if store.calls != 4 {
		t.Fatalf("%d round trips for 40 calls, want 4", store.calls)
	}
	mustRefuse(t, s, "k", limit, 10*time.Millisecond)
	c.Add(5 * time.Millisecond)
	mustRefuse(t, s, "k", limit, 5*time.Millisecond)
	if store.calls != 5 {
		t.Fatalf("%d round trips, want 5: a refusal is remembered", store.calls)
	}
}

// TestSharedReplicasSpendOneBudget has three replicas take from one store
// at once: together they never admit more than the bucket holds.
func TestSharedReplicasSpendOneBudget(t *testing.T) {
	c := newClock()
	store := newFakeStore()
	limit := mcpgate.RateLimit{PerMinute: 100, Burst: 100}
	var admitted sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 3 {
		s := NewShared(store, c.Now)
		admitted.Go(func() {
			for range 100 {
				if wait, _ := s.Allow(context.Background(), "k", limit); wait == 0 {
					mu.Lock()
					total++
					mu.Unlock()
				}
			}
		})
	}
	admitted.Wait()
	if total != 100 {
		t.Fatalf("three replicas admitted %d calls, want exactly the budget of 100", total)
	}
}

func TestBatch(t *testing.T) {
	for _, tc := range []struct {
		limit mcpgate.RateLimit
		want  int64
	}{
		{mcpgate.RateLimit{PerMinute: 100, Burst: 100}, 1},
		{mcpgate.RateLimit{PerMinute: 6000, Burst: 1000}, 10},
		{mcpgate.RateLimit{PerMinute: 60000, Burst: 20}, 5},
		{mcpgate.RateLimit{PerMinute: 60000, Burst: 1}, 1},
	} {
		if got := Batch(tc.limit); got != tc.want {
			t.Errorf("Batch(%+v) = %d, want %d", tc.limit, got, tc.want)
		}
	}
}

// fakeStore is a RateBucketStore in memory, with the database's rule.
type fakeStore struct {
	mu    sync.Mutex
	tats  map[string]int64
	calls int
}

func newFakeStore() *fakeStore { return &fakeStore{tats: map[string]int64{}} }

func (f *fakeStore) TakeTokens(_ context.Context, key string, limit mcpgate.RateLimit, want int64, now time.Time) (int64, time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	taken, next, wait := limit.Take(f.tats[key], now.UnixNano(), want)
	f.tats[key] = next
	return taken, wait, nil
}

func (f *fakeStore) DeleteFullBuckets(context.Context, time.Time) (int64, error) { return 0, nil }
