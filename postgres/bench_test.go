package postgres_test

import (
	"testing"

	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/sqlstore/storetest"
)

func BenchmarkFindKeyByHash(b *testing.B) {
	storetest.BenchFindKeyByHash(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}

func BenchmarkFindSession(b *testing.B) {
	storetest.BenchFindSession(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}

func BenchmarkTakeTokens(b *testing.B) {
	storetest.BenchTakeTokens(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}

func BenchmarkIdempotency(b *testing.B) {
	storetest.BenchIdempotency(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}

func BenchmarkInsertCalls(b *testing.B) {
	storetest.BenchInsertCalls(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}

func BenchmarkMessageRoundTrip(b *testing.B) {
	storetest.BenchMessageRoundTrip(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}

func BenchmarkMessageRoundTripHandoff(b *testing.B) {
	storetest.BenchMessageRoundTripHandoff(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}

func BenchmarkMessageRoundTripParallel(b *testing.B) {
	storetest.BenchMessageRoundTripParallel(b, mustOpen(b, pgtest.Database(b, pgtest.Admin(b))))
}
