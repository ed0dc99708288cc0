package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// BenchFindKeyByHash measures FindKeyByHash, which every request with an
// API key runs, on a store holding 1000 keys: one goroutine at a time, then
// GOMAXPROCS goroutines at once.
func BenchFindKeyByHash(b *testing.B, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(b, s, "bench")
	var hashes []string
	for range 1000 {
		hashes = append(hashes, mustKey(b, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID}).Hash)
	}
	benchLookup(b, func(i int) error {
		_, err := s.FindKeyByHash(ctx, hashes[i%len(hashes)])
		return err
	})
}

// BenchFindSession measures FindSession, which every MCP request runs, on a
// store holding 1000 sessions.
func BenchFindSession(b *testing.B, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(b, s, "bench")
	mustAgent(b, s, "bench", u.ID)
	var ids []string
	for i := range 1000 {
		ids = append(ids, mustSession(b, s, fmt.Sprintf("sess-%04d", i), "bench").ID)
	}
	benchLookup(b, func(i int) error {
		_, err := s.FindSession(ctx, ids[i%len(ids)])
		return err
	})
}

// benchLookup runs lookup serially and in parallel.
func benchLookup(b *testing.B, lookup func(i int) error) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := lookup(i); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if err := lookup(i); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}

// BenchTakeTokens measures TakeTokens, the round trip a shared rate limit
// makes once per leased batch, on 100 buckets that never run dry.
func BenchTakeTokens(b *testing.B, s mcpgate.Store) {
	ctx := context.Background()
	limit := mcpgate.RateLimit{PerMinute: 1 << 40, Burst: 1 << 30}
	benchLookup(b, func(i int) error {
		_, _, err := s.TakeTokens(ctx, fmt.Sprintf("user:u%d\nagent", i%100), limit, 1, time.Now())
		return err
	})
}
