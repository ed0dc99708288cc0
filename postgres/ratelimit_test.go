package postgres_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/ratelimit"
)

// TestSharedLimitAcrossReplicas has three replicas, each with its own
// connection pool and limiter, call at once under a limit of 100 a minute
// for a simulated minute: together they admit exactly the burst and then
// the minute's refill, never more (leases of one token at this rate leave
// nothing to lapse).
func TestSharedLimitAcrossReplicas(t *testing.T) {
	dsn := pgtest.Database(t, pgtest.Admin(t))
	limit := mcpgate.RateLimit{PerMinute: 100, Burst: 100}
	start := time.Now()
	var clock atomic.Int64 // offset from start, moved by the test
	now := func() time.Time { return start.Add(time.Duration(clock.Load())) }
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		lim := ratelimit.NewShared(mustOpen(t, dsn), now)
		wg.Go(func() {
			for range 120 {
				wait, err := lim.Allow(context.Background(), "user:u1\nagent", limit)
				if err != nil {
					t.Error(err)
					return
				}
				if wait == 0 {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 100 {
		t.Fatalf("three replicas admitted %d calls at once, want the burst of 100", n)
	}
	clock.Store(int64(time.Minute))
	admitted.Store(0)
	for range 3 {
		lim := ratelimit.NewShared(mustOpen(t, dsn), now)
		wg.Go(func() {
			for range 50 {
				if wait, _ := lim.Allow(context.Background(), "user:u1\nagent", limit); wait == 0 {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 100 {
		t.Fatalf("a minute later, three replicas admitted %d calls, want the 100 that flowed in", n)
	}
}
