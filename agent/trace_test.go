package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// testTrace is the trace context of a traced call's backend span.
var testTrace = mcpgate.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", State: "vendor=x"}

// A pull worker gets the call's trace context in the chat_message it
// reads from its inbox stream, on both engines.
func TestPulledMessageCarriesTrace(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			st, broker := openEngine(t, engine)
			s := mustStack(t, st, broker, time.Hour)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			(&worker{url: s.url, key: s.key, handle: func(ctx context.Context, w *worker, m *mcpgate.Message) {
				_ = w.post(ctx, m, mcpgate.MessageReply, mcpgate.MessageBody{Text: m.Trace.Parent + " " + m.Trace.State})
			}}).start(t, ctx)
			call := s.call(0, `{"message":"hello"}`, "")
			call.Trace = testTrace
			if got, want := mustText(t, s, call), testTrace.Parent+" "+testTrace.State; got != want {
				t.Errorf("the worker saw trace %q, want %q", got, want)
			}
		})
	}
}
