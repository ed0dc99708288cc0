package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/audit"
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
		log = audit.New(&audit.Options{Store: store, QueueSize: 1 << 16})
		go log.Run()
		opts.Idempotency, opts.Auditor = store, log
		opts.Limiter, opts.DefaultRateLimit = ratelimit.NewMemory(nil), &mcpgate.RateLimit{PerMinute: 1e9, Burst: 1e9}
	}
	p := New(opts)
	agent := &mcpgate.Agent{ID: "a1"}
	caller := (&mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k", UserID: "u"}).Caller()
	b.ReportAllocs()
	start, i := processCPU(), 0
	for b.Loop() {
		i++
		args := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high"}`)
		if keyed {
			args = json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high","idempotency_key":"k-` + strconv.Itoa(i) + `"}`)
		}
		call := &mcpgate.Call{Agent: agent, ToolName: "order", Arguments: args, Caller: caller, Notifier: mcpgate.NopNotifier{}}
		if _, err := p.Call(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
	if log != nil {
		_ = log.Close() // writes what is queued: its CPU is the calls'
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
