package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func idempotencyTests() []test {
	return []test{
		{"ClaimComplete", testIdemClaimComplete},
		{"Scope", testIdemScope},
		{"Release", testIdemRelease},
		{"Stale", testIdemStale},
		{"Expired", testIdemExpired},
		{"ConcurrentClaims", testIdemConcurrent},
		{"Sweep", testIdemSweep},
	}
}

// newClaim returns a claim of key made at t, stale a minute later and
// expiring a day later.
func newClaim(identity, key string, t time.Time) *mcpgate.IdempotencyClaim {
	return &mcpgate.IdempotencyClaim{Identity: identity, AgentID: "weather", Key: key, Hash: "h1",
		ClaimedAt: t, StaleAt: t.Add(time.Minute), ExpiresAt: t.Add(24 * time.Hour)}
}

func testIdemClaimComplete(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	c := newClaim("user:u1", "k1", t0)
	held, err := s.ClaimIdempotency(ctx, c, t0)
	must(t, err)
	if held != nil || c.Token == "" {
		t.Fatalf("first claim: held = %+v, token %q; want the claim", held, c.Token)
	}
	// In flight: a second claim sees the first, unfinished.
	held, err = s.ClaimIdempotency(ctx, newClaim("user:u1", "k1", t0), t0)
	must(t, err)
	if held == nil || held.Done() || held.Token != c.Token || held.Hash != "h1" {
		t.Fatalf("second claim: held = %+v; want the first claim in flight", held)
	}
	mustStoredPrecision(t, "ClaimedAt", held.ClaimedAt)
	must(t, s.CompleteIdempotency(ctx, c, []byte(`{"content":[]}`)))
	held, err = s.ClaimIdempotency(ctx, newClaim("user:u1", "k1", t0), t0.Add(time.Hour))
	must(t, err)
	if held == nil || string(held.Result) != `{"content":[]}` {
		t.Fatalf("after completion: held = %+v; want the result", held)
	}
	// A finished row never goes stale, only expires.
	if held, _ := s.ClaimIdempotency(ctx, newClaim("user:u1", "k1", t0), t0.Add(23*time.Hour)); held == nil {
		t.Fatal("a finished claim was taken over before it expired")
	}
}

func testIdemScope(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	for _, c := range []*mcpgate.IdempotencyClaim{
		newClaim("user:u1", "k", t0), newClaim("user:u2", "k", t0), newClaim("user:u1", "k2", t0),
		{Identity: "user:u1", AgentID: "other", Key: "k", Hash: "h", ClaimedAt: t0, StaleAt: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)},
	} {
		held, err := s.ClaimIdempotency(ctx, c, t0)
		must(t, err)
		if held != nil {
			t.Fatalf("claim %s/%s/%s refused: its scope is its own", c.Identity, c.AgentID, c.Key)
		}
	}
}

func testIdemRelease(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	c := newClaim("user:u1", "k", t0)
	_, err := s.ClaimIdempotency(ctx, c, t0)
	must(t, err)
	must(t, s.ReleaseIdempotency(ctx, c))
	_, err = s.FindIdempotency(ctx, "user:u1", "weather", "k")
	mustCode(t, err, mcpgate.ENOTFOUND)
	again := newClaim("user:u1", "k", t0)
	held, err := s.ClaimIdempotency(ctx, again, t0)
	must(t, err)
	if held != nil {
		t.Fatal("a released key could not be claimed again")
	}
	// The first call's release or completion must not touch the new claim.
	must(t, s.ReleaseIdempotency(ctx, c))
	mustCode(t, s.CompleteIdempotency(ctx, c, []byte(`{}`)), mcpgate.ENOTFOUND)
	got, err := s.FindIdempotency(ctx, "user:u1", "weather", "k")
	must(t, err)
	mustEqual(t, "token", got.Token, again.Token)
}

func testIdemStale(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	old := newClaim("user:u1", "k", t0)
	_, err := s.ClaimIdempotency(ctx, old, t0)
	must(t, err)
	if held, _ := s.ClaimIdempotency(ctx, newClaim("user:u1", "k", t0), t0.Add(59*time.Second)); held == nil {
		t.Fatal("a claim was taken over before it went stale")
	}
	retry := newClaim("user:u1", "k", t0.Add(time.Minute))
	retry.Hash = "h2"
	held, err := s.ClaimIdempotency(ctx, retry, t0.Add(time.Minute))
	must(t, err)
	if held != nil {
		t.Fatalf("a stale claim was not taken over: held = %+v", held)
	}
	mustCode(t, s.CompleteIdempotency(ctx, old, []byte(`{}`)), mcpgate.ENOTFOUND)
	got, err := s.FindIdempotency(ctx, "user:u1", "weather", "k")
	must(t, err)
	mustEqual(t, "hash", got.Hash, "h2")
}

func testIdemExpired(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	c := newClaim("user:u1", "k", t0)
	_, err := s.ClaimIdempotency(ctx, c, t0)
	must(t, err)
	must(t, s.CompleteIdempotency(ctx, c, []byte(`{"content":[]}`)))
	later := t0.Add(25 * time.Hour)
	held, err := s.ClaimIdempotency(ctx, newClaim("user:u1", "k", later), later)
	must(t, err)
	if held != nil {
		t.Fatal("an expired key was not claimed anew")
	}
	got, err := s.FindIdempotency(ctx, "user:u1", "weather", "k")
	must(t, err)
	if got.Done() {
		t.Fatal("the new claim kept the expired result")
	}
}

// testIdemConcurrent has 16 goroutines claim one key at once: exactly one
// wins, and every other sees the winner's claim.
func testIdemConcurrent(t *testing.T, s mcpgate.Store) {
	const n = 16
	ctx := context.Background()
	t0 := time.Now()
	var wg sync.WaitGroup
	won := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			c := newClaim("user:u1", "k", t0)
			held, err := s.ClaimIdempotency(ctx, c, t0)
			switch {
			case err != nil:
				errs <- err
			case held == nil:
				won <- c.Token
			}
		})
	}
	wg.Wait()
	close(won)
	close(errs)
	for err := range errs {
		must(t, err)
	}
	var winners []string
	for tok := range won {
		winners = append(winners, tok)
	}
	mustEqual(t, "winners", len(winners), 1)
	got, err := s.FindIdempotency(ctx, "user:u1", "weather", "k")
	must(t, err)
	mustEqual(t, "token", got.Token, winners[0])
}

func testIdemSweep(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	for i := range 12 {
		c := newClaim("user:u1", string(rune('a'+i)), t0)
		if i < 9 {
			c.ExpiresAt = t0.Add(-time.Second)
		}
		_, err := s.ClaimIdempotency(ctx, c, t0.Add(-time.Hour))
		must(t, err)
	}
	var total int64
	for {
		n, err := s.DeleteExpiredIdempotency(ctx, t0, 4)
		must(t, err)
		if n == 0 {
			break
		}
		if n > 4 {
			t.Fatalf("deleted %d, want at most 4", n)
		}
		total += n
	}
	mustEqual(t, "deleted", total, int64(9))
	_, err := s.FindIdempotency(ctx, "user:u1", "weather", "j")
	must(t, err)
}
