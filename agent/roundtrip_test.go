package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/agent"
	"github.com/mcpgate/mcpgate/pushsig"
)

// progressLog is a Notifier that keeps the progress messages it is sent.
type progressLog struct {
	mcpgate.NopNotifier
	mu   sync.Mutex
	msgs []string
}

func (p *progressLog) Progress(_, _ float64, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msg)
}

// answer is the handler of a worker that streams two deltas, then answers
// with the number of the turn (chat messages in the channel so far), or
// echoes a declared tool's arguments.
func answer(ctx context.Context, w *worker, m *mcpgate.Message) {
	if m.Type != mcpgate.MessageChat {
		return
	}
	if m.Tool == "lookup" {
		_ = w.post(ctx, m, mcpgate.MessageReply, mcpgate.MessageBody{Text: "row", Data: m.Arguments})
		return
	}
	hist, err := w.history(ctx, m)
	if err != nil {
		_ = w.post(ctx, m, mcpgate.MessageError, mcpgate.MessageBody{Text: err.Error()})
		return
	}
	turn := 0
	for _, h := range hist {
		if h.Type == mcpgate.MessageChat {
			turn++
		}
	}
	_ = w.post(ctx, m, mcpgate.MessageReplyDelta, mcpgate.MessageBody{Text: "reading"})
	_ = w.post(ctx, m, mcpgate.MessageReplyDelta, mcpgate.MessageBody{Text: "counting"})
	_ = w.post(ctx, m, mcpgate.MessageReply, mcpgate.MessageBody{Text: fmt.Sprintf("turn %d: %s", turn, m.Body.Text)})
}

// mustText calls the backend and returns the result's text, failing on an
// error or an error result.
func mustText(tb testing.TB, s *stack, call *mcpgate.Call) string {
	tb.Helper()
	res, err := s.backend.CallTool(context.Background(), call)
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 {
		tb.Fatalf("result = %+v", res)
	}
	return res.Content[0].Text
}

func TestRoundTrip(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			st, broker := openEngine(t, engine)
			s := mustStack(t, st, broker, time.Hour)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			(&worker{url: s.url, key: s.key, handle: answer}).start(t, ctx)

			streamed := s.call(0, `{"message":"hello"}`, "")
			log := &progressLog{}
			streamed.Notifier = log
			if got := mustText(t, s, streamed); got != "turn 1: hello" {
				t.Errorf("single call = %q", got)
			}
			if diff := cmp.Diff([]string{"reading", "counting"}, log.msgs); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			// Two calls in one session share the channel: the agent sees
			// the first in the history.
			mustText(t, s, s.call(0, `{"message":"first"}`, "sess-1"))
			if got := mustText(t, s, s.call(0, `{"message":"second"}`, "sess-1")); got != "turn 2: second" {
				t.Errorf("second call of a session = %q", got)
			}
			// context_id continues a conversation from another session.
			res, err := s.backend.CallTool(ctx, s.call(0, `{"message":"a"}`, "sess-2"))
			must(t, err)
			id := contextID(t, res)
			if got := mustText(t, s, s.call(0, `{"message":"b","context_id":"`+id+`"}`, "sess-3")); got != "turn 2: b" {
				t.Errorf("call with context_id = %q", got)
			}
			res, err = s.backend.CallTool(ctx, s.call(1, `{"row":3}`, ""))
			if err != nil || string(res.StructuredContent) != `{"row":3}` {
				t.Errorf("declared tool: %+v, %v", res, err)
			}
		})
	}
}

// contextID returns the channel ID in a result's _meta.
func contextID(tb testing.TB, res *mcpgate.Result) string {
	tb.Helper()
	var w struct {
		Meta map[string]string `json:"_meta"`
	}
	if err := json.Unmarshal(res.Meta, &w.Meta); err != nil || w.Meta["mcpgate/context_id"] == "" {
		tb.Fatalf("no context_id in %s", res.Meta)
	}
	return w.Meta["mcpgate/context_id"]
}

func TestOfflineAndCancel(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			st, broker := openEngine(t, engine)
			s := mustStack(t, st, broker, time.Hour)
			start := time.Now()
			_, err := s.backend.CallTool(context.Background(), s.call(0, `{"message":"anyone?"}`, ""))
			if mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE || time.Since(start) > 5*time.Second {
				t.Fatalf("offline call: %v after %s, want EUNAVAILABLE at once", err, time.Since(start))
			}
			got := make(chan *mcpgate.Message, 4)
			wctx, stop := context.WithCancel(context.Background())
			defer stop()
			(&worker{url: s.url, key: s.key, handle: func(_ context.Context, _ *worker, m *mcpgate.Message) { got <- m }}).start(t, wctx)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := s.backend.CallTool(ctx, s.call(0, `{"message":"slow"}`, "")); done <- err }()
			chat := <-got
			cancel()
			if err := <-done; mcpgate.ErrorCode(err) != mcpgate.ECANCELED {
				t.Errorf("canceled call: %v, want ECANCELED", err)
			}
			if c := <-got; c.Type != mcpgate.MessageCancel || c.InReplyTo != chat.ID {
				t.Errorf("after the cancel the worker got %+v, want a cancel of %s", c, chat.ID)
			}
		})
	}
}

func TestRedeliveryAfterWorkerCrash(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			st, broker := openEngine(t, engine)
			s := mustStack(t, st, broker, 200*time.Millisecond)
			received := make(chan *mcpgate.Message, 1)
			crashed, crash := context.WithCancel(context.Background())
			(&worker{url: s.url, key: s.key, handle: func(_ context.Context, _ *worker, m *mcpgate.Message) { received <- m }}).start(t, crashed)
			done := make(chan *mcpgate.Result, 1)
			go func() {
				res, err := s.backend.CallTool(context.Background(), s.call(0, `{"message":"survive"}`, ""))
				if err != nil {
					res = mcpgate.ErrorResult("%v", err)
				}
				done <- res
			}()
			first := <-received
			crash() // the worker dies holding the message, unacknowledged
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			again := make(chan string, 1)
			(&worker{url: s.url, key: s.key, handle: func(ctx context.Context, w *worker, m *mcpgate.Message) {
				again <- m.ID
				answer(ctx, w, m)
			}}).start(t, ctx)
			if id := <-again; id != first.ID {
				t.Errorf("redelivered %s, want %s", id, first.ID)
			}
			if res := <-done; res.IsError || res.Content[0].Text != "turn 1: survive" {
				t.Errorf("result = %+v", res)
			}
		})
	}
}

func TestPushThenReplyThroughAPI(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			st, broker := openEngine(t, engine)
			s := mustStack(t, st, broker, time.Hour)
			w := &worker{url: s.url, key: s.key}
			rcv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if err := pushsig.Verify([]byte("s3cret"), r.Header.Get(pushsig.Header), body, time.Now(), 0); err != nil {
					http.Error(rw, err.Error(), http.StatusUnauthorized)
					return
				}
				var m mcpgate.Message
				if json.Unmarshal(body, &m) != nil {
					http.Error(rw, "bad envelope", http.StatusBadRequest)
					return
				}
				rw.WriteHeader(http.StatusAccepted) // the reply comes through the messages API
				go answer(context.Background(), w, &m)
			}))
			defer rcv.Close()
			s.skill.Delivery, s.skill.PushURL, s.skill.PushSecret, s.skill.AllowPrivate = mcpgate.DeliveryPush, rcv.URL, "${env:PUSH_SECRET}", true
			s.backend = agent.New(&agent.Options{Bus: s.bus, Channels: s.store,
				LookupEnv: func(k string) (string, bool) { return "s3cret", k == "PUSH_SECRET" }})
			if got := mustText(t, s, s.call(0, `{"message":"pushed"}`, "")); got != "turn 1: pushed" {
				t.Errorf("result = %q", got)
			}
			// Pushed messages are acknowledged: no inbox stream gets them.
			left, err := s.store.ClaimMessages(context.Background(), "csv", "", time.Now(), 0, 10)
			if err != nil || len(left) != 0 {
				t.Errorf("claimable after push: %v, %v", left, err)
			}
		})
	}
}

func TestTwoReplicas(t *testing.T) {
	if os.Getenv(envPostgres) == "" {
		t.Skip(envPostgres + " is not set; scripts/start-postgres.sh starts a server")
	}
	st, dsn := openPostgresDSN(t)
	a := mustStack(t, st, openBroker(t, dsn), time.Hour)
	_, urlB := serveReplica(t, st, openBroker(t, dsn), time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The worker holds its stream on replica B; the call runs on replica
	// A, which sees B's worker online and hears of B's reply.
	(&worker{url: urlB, key: a.key, handle: answer}).start(t, ctx)
	if got := mustText(t, a, a.call(0, `{"message":"across"}`, "")); got != "turn 1: across" {
		t.Errorf("result = %q", got)
	}
}
