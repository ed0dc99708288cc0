package metrics_test

import (
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/metrics"
)

// BenchmarkObserveToolCall records what a relayed tools/call records: its
// request, its call and its backend's time.
func BenchmarkObserveToolCall(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveBackend("agent-1", "everything", "mcp", "ok", 250*time.Microsecond)
			m.ObserveCall("agent-1", "echo", "ok", 300*time.Microsecond)
			m.ObserveRequest("/{agent}/mcp", 200, 350*time.Microsecond)
		}
	})
}
