package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// BenchIdempotency measures what a call with an idempotency key adds to
// the store: a claim and its completion (a new key), and a claim that
// finds a finished row (a replay).
func BenchIdempotency(b *testing.B, s mcpgate.Store) {
	ctx := context.Background()
	result := []byte(`{"content":[{"type":"text","text":"ok"}]}`)
	b.Run("claim+complete", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			now := time.Now()
			c := newClaim("user:bench", fmt.Sprintf("k-%d", i), now)
			if held, err := s.ClaimIdempotency(ctx, c, now); err != nil || held != nil {
				b.Fatal(err, held)
			}
			if err := s.CompleteIdempotency(ctx, c, result); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replay", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			now := time.Now()
			if held, err := s.ClaimIdempotency(ctx, newClaim("user:bench", "k-1", now), now); err != nil || held == nil {
				b.Fatal(err, held)
			}
		}
	})
}

// BenchInsertCalls measures the audit log's writes: batches of 100 calls.
func BenchInsertCalls(b *testing.B, s mcpgate.Store) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		batch := make([]*mcpgate.CallRecord, 100)
		for i := range batch {
			batch[i] = mustCallRecord("bench", "t", mcpgate.OutcomeOK, time.Now())
		}
		if err := s.InsertCalls(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/call")
}
