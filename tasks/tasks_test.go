package tasks

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/sqlite"
)

// fakeCalls answers calls: with result, or by blocking until the call's
// context ends when block is set, telling canceled.
type fakeCalls struct {
	result   *mcpgate.Result
	block    bool
	started  chan struct{}
	canceled chan struct{}
}

func (f *fakeCalls) Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	if !f.block {
		return f.result, nil
	}
	f.started <- struct{}{}
	<-ctx.Done()
	f.canceled <- struct{}{}
	return nil, ctx.Err()
}

// recorder keeps the events and status changes it is told of.
type recorder struct {
	mu       sync.Mutex
	events   []*mcpgate.Event
	statuses []mcpgate.TaskStatus
}

func (r *recorder) Publish(_ context.Context, e *mcpgate.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) onStatus(t *mcpgate.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, t.Status)
}

// lastEvent returns the last event published.
func (r *recorder) lastEvent(t *testing.T) *mcpgate.Event {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		t.Fatal("no event published")
	}
	return r.events[len(r.events)-1]
}

// openStore returns a real SQLite store in a temporary directory.
func openStore(t *testing.T) mcpgate.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newService returns a Service over store and calls, recording what it
// tells.
func newService(t *testing.T, store mcpgate.Store, calls Caller, opts Options) (*Service, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts.Store, opts.Calls, opts.Events, opts.OnStatus = store, calls, rec, rec.onStatus
	s := New(&opts)
	t.Cleanup(func() { s.Close() })
	return s, rec
}

var agent = &mcpgate.Agent{ID: "jobs", OwnerID: "usr_alice", MCPEnabled: true}

// newCall returns a call of tool with args by alice.
func newCall(tool, args string) *mcpgate.Call {
	return &mcpgate.Call{Agent: agent, ToolName: tool, Arguments: json.RawMessage(args),
		Caller: mcpgate.Caller{Identity: "user:usr_alice", UserID: "usr_alice", Kind: mcpgate.CredentialUserKey}}
}

func TestTaskCompletes(t *testing.T) {
	calls := &fakeCalls{result: &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("done")}}}
	s, rec := newService(t, openStore(t), calls, Options{})
	ctx := context.Background()
	task, err := s.Start(ctx, newCall("report", `{"month":"jan"}`), 0)
	if err != nil || task.Status != mcpgate.TaskWorking || task.TTL != DefaultTTL {
		t.Fatalf("start = %+v, %v", task, err)
	}
	done, err := s.Wait(ctx, task.ID)
	if err != nil || done.Status != mcpgate.TaskCompleted || !strings.Contains(string(done.Result), "done") {
		t.Fatalf("wait = %+v, %v", done, err)
	}
	e := rec.lastEvent(t)
	if e.Type != mcpgate.EventTaskCompleted || e.UserID != "usr_alice" || e.AgentID != "jobs" || !strings.Contains(string(e.Data), task.ID) {
		t.Errorf("event = %+v %s", e, e.Data)
	}
	if len(rec.statuses) != 1 || rec.statuses[0] != mcpgate.TaskCompleted {
		t.Errorf("statuses told = %v", rec.statuses)
	}
}

func TestToolErrorFailsTask(t *testing.T) {
	calls := &fakeCalls{result: mcpgate.ErrorResult("no such month")}
	s, rec := newService(t, openStore(t), calls, Options{})
	task, err := s.Start(context.Background(), newCall("report", `{}`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done, err := s.Wait(context.Background(), task.ID)
	if err != nil || done.Status != mcpgate.TaskFailed || !strings.Contains(string(done.Result), "no such month") {
		t.Fatalf("wait = %+v, %v", done, err)
	}
	if e := rec.lastEvent(t); e.Type != mcpgate.EventTaskFailed {
		t.Errorf("event = %s", e.Type)
	}
}

func TestCancelReachesTheCall(t *testing.T) {
	calls := &fakeCalls{block: true, started: make(chan struct{}, 1), canceled: make(chan struct{}, 1)}
	s, rec := newService(t, openStore(t), calls, Options{})
	ctx := context.Background()
	task, err := s.Start(ctx, newCall("report", `{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	<-calls.started
	got, err := s.Cancel(ctx, task.ID)
	if err != nil || got.Status != mcpgate.TaskCancelled {
		t.Fatalf("cancel = %+v, %v", got, err)
	}
	<-calls.canceled
	if _, err := s.Cancel(ctx, task.ID); mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		t.Errorf("second cancel: %v; want a conflict", err)
	}
	done, err := s.Wait(ctx, task.ID)
	if err != nil || done.Status != mcpgate.TaskCancelled {
		t.Fatalf("after the call ended: %+v, %v", done, err)
	}
	if e := rec.lastEvent(t); e.Type != mcpgate.EventTaskCancelled {
		t.Errorf("event = %s", e.Type)
	}
}

func TestCloseFailsRunningTasks(t *testing.T) {
	store := openStore(t)
	calls := &fakeCalls{block: true, started: make(chan struct{}, 1), canceled: make(chan struct{}, 1)}
	s, _ := newService(t, store, calls, Options{})
	task, err := s.Start(context.Background(), newCall("report", `{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	<-calls.started
	s.Close()
	got, err := store.FindTask(context.Background(), task.ID)
	if err != nil || got.Status != mcpgate.TaskFailed || !strings.Contains(got.StatusMessage, "shut down") {
		t.Fatalf("after Close: %+v, %v", got, err)
	}
}

func TestRecover(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	old := &mcpgate.Task{AgentID: "jobs", Tool: "report", Identity: "user:usr_alice", ArgsHash: "h", TTL: time.Hour, Runner: "run_gone"}
	if err := store.CreateTask(ctx, old); err != nil {
		t.Fatal(err)
	}
	shared, _ := newService(t, store, &fakeCalls{}, Options{Shared: true})
	shared.Recover(ctx) // its heartbeat is fresh: another replica may run it
	if got, _ := store.FindTask(ctx, old.ID); got.Status != mcpgate.TaskWorking {
		t.Fatalf("shared store, fresh heartbeat: %s; want working", got.Status)
	}
	alone, rec := newService(t, store, &fakeCalls{}, Options{})
	alone.Recover(ctx)
	got, err := store.FindTask(ctx, old.ID)
	if err != nil || got.Status != mcpgate.TaskFailed || got.StatusMessage != restarted {
		t.Fatalf("own store: %+v, %v", got, err)
	}
	if e := rec.lastEvent(t); e.Type != mcpgate.EventTaskFailed || !strings.Contains(string(e.Data), restarted) {
		t.Errorf("event = %s %s", e.Type, e.Data)
	}
}

// TestRecoverQuietWhenClosing: a recovery cut short because the gateway
// is closing (its context ended) logs no warning; one that fails while
// the context lives does.
func TestRecoverQuietWhenClosing(t *testing.T) {
	var log strings.Builder
	logger := slog.New(slog.NewTextHandler(&log, nil))
	store := openStore(t)
	s, _ := newService(t, store, &fakeCalls{}, Options{Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Recover(ctx)
	if log.Len() != 0 {
		t.Errorf("a recovery cut short by closing logged %q", log.String())
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	s.Recover(context.Background())
	if !strings.Contains(log.String(), "fail the tasks of a gone process") {
		t.Errorf("a failed recovery logged %q, want its warning", log.String())
	}
}

func TestIdempotentStart(t *testing.T) {
	calls := &fakeCalls{result: &mcpgate.Result{}}
	s, _ := newService(t, openStore(t), calls, Options{})
	ctx := context.Background()
	first, err := s.Start(ctx, newCall("report", `{"month":"jan","idempotency_key":"k1"}`), 0)
	if err != nil || first.IdempotencyKey != "k1" {
		t.Fatalf("first = %+v, %v", first, err)
	}
	again, err := s.Start(ctx, newCall("report", `{"idempotency_key":"k1","month":"jan"}`), 0)
	if err != nil || again.ID != first.ID {
		t.Fatalf("same key and arguments: %+v, %v; want task %s", again, err, first.ID)
	}
	_, err = s.Start(ctx, newCall("report", `{"month":"feb","idempotency_key":"k1"}`), 0)
	if mcpgate.ErrorCode(err) != mcpgate.EMISMATCH {
		t.Fatalf("same key, other arguments: %v; want a mismatch", err)
	}
}

func TestStartAfterClose(t *testing.T) {
	store := openStore(t)
	s, _ := newService(t, store, &fakeCalls{result: &mcpgate.Result{}}, Options{})
	s.Close()
	task, err := s.Start(context.Background(), newCall("report", `{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.FindTask(context.Background(), task.ID)
	if err != nil || got.Status != mcpgate.TaskFailed {
		t.Fatalf("a task started after Close: %+v, %v; want failed", got, err)
	}
}

// reporter reports progress with a message, then blocks until released.
type reporter struct{ release chan struct{} }

func (r *reporter) Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	call.Notifier.Progress(0, 0, "waiting for approval by alice")
	<-r.release
	return &mcpgate.Result{}, nil
}

func TestProgressBecomesStatusMessage(t *testing.T) {
	calls := &reporter{release: make(chan struct{})}
	s, rec := newService(t, openStore(t), calls, Options{})
	ctx := context.Background()
	task, err := s.Start(ctx, newCall("report", `{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	for {
		got, err := s.Get(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.StatusMessage == "waiting for approval by alice" && got.Status == mcpgate.TaskWorking {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(calls.release)
	if done, err := s.Wait(ctx, task.ID); err != nil || done.Status != mcpgate.TaskCompleted {
		t.Fatalf("wait = %+v, %v", done, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.statuses) != 2 || rec.statuses[0] != mcpgate.TaskWorking || rec.statuses[1] != mcpgate.TaskCompleted {
		t.Errorf("statuses told = %v; want working (the message), then completed", rec.statuses)
	}
}

// TestBeat runs heartbeats of a replica on a shared store: it keeps its
// own task alive, fails the task of a runner that stopped beating, cancels
// its run of a task cancelled elsewhere, and sweeps expired tasks.
func TestBeat(t *testing.T) {
	store := openStore(t)
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	gone := &mcpgate.Task{AgentID: "jobs", Tool: "report", Identity: "user:usr_alice", ArgsHash: "h", TTL: time.Hour, Runner: "run_gone", CreatedAt: start}
	expired := &mcpgate.Task{AgentID: "jobs", Tool: "report", Identity: "user:usr_alice", ArgsHash: "h", TTL: time.Second, Runner: "run_gone", CreatedAt: start}
	for _, task := range []*mcpgate.Task{gone, expired} {
		if err := store.CreateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	calls := &fakeCalls{block: true, started: make(chan struct{}, 1), canceled: make(chan struct{}, 1)}
	s, _ := newService(t, store, calls, Options{Shared: true, Lease: 10 * time.Second})
	mine, err := s.Start(ctx, newCall("report", `{}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	<-calls.started
	s.beat(ctx, true)
	if got, _ := store.FindTask(ctx, gone.ID); got.Status != mcpgate.TaskFailed || got.StatusMessage != restarted {
		t.Errorf("the gone runner's task: %+v", got)
	}
	if _, err := store.FindTask(ctx, expired.ID); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("the expired task: %v; want it swept", err)
	}
	got, _ := store.FindTask(ctx, mine.ID)
	if got.Status != mcpgate.TaskWorking || !got.HeartbeatAt.After(got.CreatedAt) {
		t.Errorf("own task after a beat: %+v", got)
	}
	// Another replica cancels it in the store: the next beat cancels the run.
	if _, err := store.FinishTask(ctx, mine.ID, mcpgate.TaskEnd{Status: mcpgate.TaskCancelled}); err != nil {
		t.Fatal(err)
	}
	s.beat(ctx, false)
	<-calls.canceled
}
