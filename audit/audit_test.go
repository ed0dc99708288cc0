package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/audit"
	"github.com/mcpgate/mcpgate/sqlite"
)

// blockingStore holds every write until released, to fill the queue.
type blockingStore struct {
	audit.Store
	release chan struct{}
}

func (b *blockingStore) InsertCalls(ctx context.Context, calls []*mcpgate.CallRecord) error {
	<-b.release
	return b.Store.InsertCalls(ctx, calls)
}

func mustStore(t *testing.T) mcpgate.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func record(i int) *mcpgate.CallRecord {
	return &mcpgate.CallRecord{AgentID: "a", Tool: "t", Outcome: mcpgate.OutcomeOK, Arguments: json.RawMessage(fmt.Sprintf(`{"password":"p","n":%d}`, i))}
}

// resultOf is record i's result, of a length that varies with i.
func resultOf(i int) *mcpgate.Result {
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent(strings.Repeat("x", i*37%200))}}
}

// TestCloseFlushes queues more records than one batch and closes: every
// record is written, redacted, with its hash and result size (the writer
// reuses its buffers from one record to the next).
func TestCloseFlushes(t *testing.T) {
	s := mustStore(t)
	l := audit.New(&audit.Options{Store: s, BatchSize: 7})
	go l.Run()
	for i := range 50 {
		l.Audit(record(i), &mcpgate.Tool{Name: "t"}, nil, resultOf(i))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	calls, _, err := s.ListCalls(context.Background(), mcpgate.CallFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 50 {
		t.Fatalf("%d calls written, want 50", len(calls))
	}
	for _, c := range calls {
		var args struct{ N int }
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			t.Fatal(err)
		}
		hash, _ := mcpgate.HashArguments("t", record(args.N).Arguments)
		res, _ := resultOf(args.N).MarshalJSON()
		if string(c.Arguments) != fmt.Sprintf(`{"n":%d,"password":"[REDACTED]"}`, args.N) || c.ArgsHash != hash || c.ResultBytes != len(res) {
			t.Fatalf("record %+v; want hash %s and %d result bytes", c, hash, len(res))
		}
	}
}

// TestDecodedArguments hands the log the arguments as the pipeline decoded
// them: it hashes and redacts that value instead of decoding the text
// again (the record's text here says otherwise, to tell which was used).
func TestDecodedArguments(t *testing.T) {
	s := mustStore(t)
	l := audit.New(&audit.Options{Store: s})
	go l.Run()
	decoded := map[string]any{"n": json.Number("2"), "token": "t"}
	l.Audit(record(0), &mcpgate.Tool{Name: "t"}, decoded, nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	calls, _, err := s.ListCalls(context.Background(), mcpgate.CallFilter{Limit: 10})
	if err != nil || len(calls) != 1 {
		t.Fatalf("%d calls, %v", len(calls), err)
	}
	want, _ := mcpgate.HashArguments("t", json.RawMessage(`{"n":2,"token":"t"}`))
	if c := calls[0]; c.ArgsHash != want || string(c.Arguments) != `{"n":2,"token":"[REDACTED]"}` {
		t.Fatalf("record hash %s arguments %s, want the decoded value's (hash %s)", c.ArgsHash, c.Arguments, want)
	}
}

// TestFullQueueDrops fills the queue while the writer is held: Audit never
// blocks, the overflow is counted, and what was queued is still written.
func TestFullQueueDrops(t *testing.T) {
	s := mustStore(t)
	b := &blockingStore{Store: s, release: make(chan struct{})}
	drops := &counter{}
	l := audit.New(&audit.Options{Store: b, QueueSize: 4, BatchSize: 1, Dropped: drops})
	go l.Run()
	for i := range 20 {
		l.Audit(record(i), nil, nil, nil) // must return at once although nothing is written
	}
	if l.Dropped() < 20-4-2 || drops.n.Load() != l.Dropped() {
		t.Fatalf("dropped %d (metric %d), want at least 14", l.Dropped(), drops.n.Load())
	}
	close(b.release)
	l.Close()
	calls, _, err := s.ListCalls(context.Background(), mcpgate.CallFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(calls))+l.Dropped() != 20 {
		t.Fatalf("%d written + %d dropped, want 20", len(calls), l.Dropped())
	}
}

// counter is a Dropper.
type counter struct{ n atomic.Int64 }

func (c *counter) AuditDropped() { c.n.Add(1) }

// TestFailureMessage checks that a result whose backend could not serve
// the call records its text as the call's error message.
func TestFailureMessage(t *testing.T) {
	s := mustStore(t)
	l := audit.New(&audit.Options{Store: s})
	go l.Run()
	res := mcpgate.ErrorResult("Request to api timed out after 1s.")
	res.Failure = mcpgate.ETIMEOUT
	l.Audit(&mcpgate.CallRecord{AgentID: "a", Tool: "t", Outcome: mcpgate.OutcomeTimeout}, &mcpgate.Tool{Name: "t"}, nil, res)
	l.Audit(&mcpgate.CallRecord{AgentID: "a", Tool: "u", Outcome: mcpgate.OutcomeToolError}, &mcpgate.Tool{Name: "u"}, nil, mcpgate.ErrorResult("HTTP 409"))
	l.Close()
	calls, _, err := s.ListCalls(context.Background(), mcpgate.CallFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range calls {
		got[c.Tool] = c.Error
	}
	if got["t"] != "Request to api timed out after 1s." || got["u"] != "" {
		t.Fatalf("errors %q", got)
	}
}

// TestFullBatchWakesWriter checks that a full batch is written without
// waiting for the flush interval: the writer is woken once per batch.
func TestFullBatchWakesWriter(t *testing.T) {
	s := mustStore(t)
	l := audit.New(&audit.Options{Store: s, BatchSize: 3, FlushEvery: time.Hour})
	go l.Run()
	defer l.Close()
	for i := range 3 {
		l.Audit(record(i), nil, nil, nil)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		calls, _, err := s.ListCalls(context.Background(), mcpgate.CallFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) == 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of a full batch of 3 written", len(calls))
		}
	}
}
