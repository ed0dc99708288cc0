package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func rateBucketTests() []test {
	return []test{
		{"TakeAndRefill", testTakeAndRefill},
		{"ConcurrentTakers", testConcurrentTakers},
		{"DeleteFull", testDeleteFullBuckets},
	}
}

// bucketStart is the fixed time the bucket tests start at.
var bucketStart = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// take takes up to want tokens at the given offset from bucketStart.
func take(t *testing.T, s mcpgate.Store, key string, limit mcpgate.RateLimit, want int64, at time.Duration) (int64, time.Duration) {
	t.Helper()
	n, wait, err := s.TakeTokens(context.Background(), key, limit, want, bucketStart.Add(at))
	must(t, err)
	return n, wait
}

// testTakeAndRefill takes a new bucket's burst in batches, is refused with
// the true wait, and gets tokens back as time passes, never beyond the
// burst; a clock behind refills nothing.
func testTakeAndRefill(t *testing.T, s mcpgate.Store) {
	limit := mcpgate.RateLimit{PerMinute: 60, Burst: 5}
	if n, _ := take(t, s, "a", limit, 3, 0); n != 3 {
		t.Fatalf("took %d of a new bucket, want 3", n)
	}
	if n, _ := take(t, s, "a", limit, 3, 0); n != 2 {
		t.Fatalf("took %d, want the 2 left", n)
	}
	n, wait := take(t, s, "a", limit, 1, 250*time.Millisecond)
	mustEqual(t, "taken, wait", []any{n, wait}, []any{int64(0), 750 * time.Millisecond})
	if n, _ := take(t, s, "a", limit, 1, 100*time.Millisecond); n != 0 {
		t.Fatalf("a clock behind took %d tokens", n)
	}
	if n, _ := take(t, s, "a", limit, 3, 2*time.Second); n != 2 {
		t.Fatalf("took %d after 2 s, want 2", n)
	}
	if n, _ := take(t, s, "a", limit, 10, time.Hour); n != 5 {
		t.Fatalf("took %d after an hour, want the burst of 5", n)
	}
	if n, _ := take(t, s, "b", limit, 1, time.Hour); n != 1 {
		t.Fatalf("another key shares the bucket: took %d", n)
	}
}

// testConcurrentTakers has 8 takers drain one bucket at once: together they
// take exactly its tokens, never more.
func testConcurrentTakers(t *testing.T, s mcpgate.Store) {
	const takers = 8
	limit := mcpgate.RateLimit{PerMinute: 1, Burst: 100}
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := int64(0)
	errs := make(chan error, takers)
	for w := range takers {
		wg.Go(func() {
			for range 30 {
				n, _, err := s.TakeTokens(context.Background(), "shared", limit, int64(w%3+1), bucketStart)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	mustEqual(t, "tokens taken", total, int64(100))
}

// testDeleteFullBuckets deletes the buckets that are full again, and only
// those; a deleted bucket starts full.
func testDeleteFullBuckets(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	limit := mcpgate.RateLimit{PerMinute: 60, Burst: 10}
	take(t, s, "one", limit, 1, 0)  // full again after 1 s
	take(t, s, "ten", limit, 10, 0) // after 10 s
	n, err := s.DeleteFullBuckets(ctx, bucketStart.Add(5*time.Second))
	must(t, err)
	mustEqual(t, "deleted", n, int64(1))
	if got, _ := take(t, s, "ten", limit, 10, 5*time.Second); got != 5 {
		t.Fatalf("the bucket not yet full was forgotten: took %d, want 5", got)
	}
	if got, _ := take(t, s, "one", limit, 10, 5*time.Second); got != 10 {
		t.Fatalf("a deleted bucket holds %d, want 10", got)
	}
}
