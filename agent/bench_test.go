package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// echo is the handler of a worker that answers each chat message at once.
func echo(ctx context.Context, w *worker, m *mcpgate.Message) {
	if m.Type == mcpgate.MessageChat {
		_ = w.post(ctx, m, mcpgate.MessageReply, mcpgate.MessageBody{Text: m.Body.Text})
	}
}

// BenchmarkRoundTrip measures a call's round trip on loopback: the backend
// posts the chat message, the bus wakes the inbox stream, a pull worker
// receives it over HTTP (SSE) and posts its reply over HTTP, and the
// waiting call returns the result. It reports the median and 99th
// percentile latency and the calls per second of one caller.
func BenchmarkRoundTrip(b *testing.B) {
	for _, engine := range engines {
		b.Run(engine, func(b *testing.B) {
			st, broker := openEngine(b, engine)
			s := mustStack(b, st, broker, time.Minute)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			(&worker{url: s.url, key: s.key, handle: echo}).start(b, ctx)
			call := s.call(0, `{"message":"ping"}`, "")
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				res, err := s.backend.CallTool(ctx, call)
				lat = append(lat, time.Since(t0))
				if err != nil || res.IsError {
					b.Fatalf("CallTool = %+v, %v", res, err)
				}
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// reportLatency reports p50 and p99 in milliseconds and calls per second.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	var total time.Duration
	for _, d := range lat {
		total += d
	}
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(lat))/total.Seconds(), "calls/s")
}
