package mcp

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// queueLog is an EventLog that queues as package peer's does and whose
// writer only counts.
type queueLog struct {
	q chan *mcpgate.StreamEvent
	n atomic.Int64
}

func (l *queueLog) Record(ev *mcpgate.StreamEvent, _ int64) {
	select {
	case l.q <- ev:
	default:
	}
}

func (l *queueLog) Events(context.Context, string, string, uint64) ([]*mcpgate.StreamEvent, error) {
	return nil, nil
}

// BenchmarkStreamEmit measures what one SSE event costs the sending
// goroutine, kept in memory only and also given to an EventLog.
func BenchmarkStreamEmit(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`)
	run := func(b *testing.B, sl *sessionLog) {
		ls := &liveSession{}
		ls.replay.log = sl
		st := &stream{id: "aaaaaaaaaaaa1", get: true, replay: &ls.replay}
		b.ReportAllocs()
		for b.Loop() {
			st.emit(msg)
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, nil) })
	b.Run("logged", func(b *testing.B) {
		l := &queueLog{q: make(chan *mcpgate.StreamEvent, 8192)}
		done := make(chan struct{})
		go func() {
			for range l.q {
				l.n.Add(1)
			}
			close(done)
		}()
		run(b, &sessionLog{log: l, replica: "aaaaaaaaaaaa", session: "s", pos: new(atomic.Int64)})
		close(l.q)
		<-done
	})
}
