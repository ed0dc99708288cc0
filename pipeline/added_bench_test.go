package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/audit"
	"github.com/mcpgate/mcpgate/internal/proctime"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/ratelimit"
	"github.com/mcpgate/mcpgate/sqlite"
)

// BenchmarkGovernanceAdded measures what the governance stages add to a
// call's CPU, in one process and without HTTP, so that the figure stands
// out of the noise a loaded machine puts in the full-stack benchmark: the
// bare pipeline (no stage of governance), then the pipeline with a rate
// limit that is never reached, the idempotency stage and the audit log on
// a real store, for a call without a key and with a new key per call.
// cpu-ns/op is the process's CPU per call until the audit log has written
// every row (Close flushes it), the writer's goroutine and SQLite's work
// included; on PostgreSQL, the database server's own CPU is not.
// Governance adds the difference of a variant and "bare". The garbage
// collector runs as `mcpgate serve` sets it (GOGC=400) unless GOGC is set.
func BenchmarkGovernanceAdded(b *testing.B) {
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	b.Run("bare", func(b *testing.B) { benchAdded(b, nil, false) })
	b.Run("sqlite/no-key", func(b *testing.B) { benchAdded(b, openSQLite(b), false) })
	b.Run("sqlite/new-key", func(b *testing.B) { benchAdded(b, openSQLite(b), true) })
	b.Run("postgres/no-key", func(b *testing.B) { benchAdded(b, openPostgres(b), false) })
}

// governedStore is what the governed variants need of a store.
type governedStore interface {
	audit.Store
	IdempotencyStore
}

// openSQLite opens a store in a new SQLite file.
func openSQLite(b *testing.B) governedStore {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "mcpgate.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// openPostgres opens a store in a new database of the test server, or
// skips without one.
func openPostgres(b *testing.B) governedStore {
	s, err := postgres.Open(context.Background(), pgtest.Database(b, pgtest.Admin(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// benchBatch is how many calls the benchmark makes before it lets the
// audit log's writer catch up: the writer's batch, at which it is woken.
const benchBatch = 500

// awaitWriter waits (idle, so without CPU of its own to speak of) until
// the log has taken every queued record. A gateway spends far more per
// call on HTTP and the backend than its record costs, so its writer keeps
// up and its queue stays short; a loop of bare pipeline calls outruns the
// writer, and a queue grown to every record of the run would measure the
// page faults of a heap grown to hold them, not a gateway's work.
func awaitWriter(log *audit.Log) {
	for log.Queued() > 0 {
		time.Sleep(100 * time.Microsecond)
	}
}

// benchAdded runs calls of a trivial REST tool through a pipeline with
// the governance stages on store (none when store is nil), each call with
// a new idempotency key when keyed.
func benchAdded(b *testing.B, store governedStore, keyed bool) {
	trivial := backendFunc(func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	opts := &Options{Tables: mustRegistry(b), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: trivial}, Recorder: nopRecorder{}}
	var log *audit.Log
	if store != nil {
		log = audit.New(&audit.Options{Store: store, QueueSize: 1 << 16, BatchSize: benchBatch})
		go log.Run()
		opts.Idempotency, opts.Auditor = store, log
		opts.Limiter, opts.DefaultRateLimit = ratelimit.NewMemory(nil), &mcpgate.RateLimit{PerMinute: 1e9, Burst: 1e9}
	}
	r := &addedRun{p: New(opts), log: log, keyed: keyed, agent: &mcpgate.Agent{ID: "a1"},
		caller: (&mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k", UserID: "u"}).Caller()}
	for range warmUpCalls {
		r.call(b)
	}
	b.ReportAllocs()
	start := proctime.Self()
	for b.Loop() {
		r.call(b)
	}
	if log != nil {
		_ = log.Close() // writes what is queued: its CPU is the calls'
	}
	b.ReportMetric(float64(proctime.Self()-start)/float64(b.N), "cpu-ns/op")
}

// warmUpCalls are made before the measure begins, so that the heap has
// grown to the size it keeps: the first touch of each new page of it is a
// page fault, which a gateway pays once and a short run on every call.
// Opening the store leaves the migrations' parse buffers on the heap, so
// that the first collections' goal, and the heap, are several times larger
// than without a store.
const warmUpCalls = 50000

// addedRun is one variant's pipeline and the state of its calls.
type addedRun struct {
	p      *Pipeline
	log    *audit.Log
	keyed  bool
	agent  *mcpgate.Agent
	caller mcpgate.Caller
	i      int
}

// call makes the next call, and lets the log's writer catch up after each
// batch.
func (r *addedRun) call(b *testing.B) {
	r.i++
	args := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high"}`)
	if r.keyed {
		args = json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high","idempotency_key":"k-` + strconv.Itoa(r.i) + `"}`)
	}
	call := &mcpgate.Call{Agent: r.agent, ToolName: "order", Arguments: args, Caller: r.caller, Notifier: mcpgate.NopNotifier{}}
	if _, err := r.p.Call(context.Background(), call); err != nil {
		b.Fatal(err)
	}
	if r.log != nil && r.i%benchBatch == 0 {
		awaitWriter(r.log)
	}
}
