package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate/sqlstore/storetest"
)

func BenchmarkFindKeyByHash(b *testing.B) {
	storetest.BenchFindKeyByHash(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkFindSession(b *testing.B) {
	storetest.BenchFindSession(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkTakeTokens(b *testing.B) {
	storetest.BenchTakeTokens(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkIdempotency(b *testing.B) {
	storetest.BenchIdempotency(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkInsertCalls(b *testing.B) {
	storetest.BenchInsertCalls(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkMessageRoundTrip(b *testing.B) {
	storetest.BenchMessageRoundTrip(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkMessageRoundTripHandoff(b *testing.B) {
	storetest.BenchMessageRoundTripHandoff(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkMessageRoundTripParallel(b *testing.B) {
	storetest.BenchMessageRoundTripParallel(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkMessageRoundTripHanded(b *testing.B) {
	storetest.BenchMessageRoundTripHanded(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}

func BenchmarkMessageRoundTripHandedParallel(b *testing.B) {
	storetest.BenchMessageRoundTripHandedParallel(b, mustOpen(b, filepath.Join(b.TempDir(), "mcpgate.db")))
}
