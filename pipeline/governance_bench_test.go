package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/audit"
	"github.com/mcpgate/mcpgate/internal/proctime"
)

// discardCalls is an audit store that keeps nothing.
type discardCalls struct{}

func (discardCalls) InsertCalls(context.Context, []*mcpgate.CallRecord) error { return nil }

// BenchmarkPipelineGovernance measures the pipeline's CPU with the
// idempotency stage and the audit log on: a call without a key (the audit
// hand-off only), a call with a fresh key each time (hash, claim, complete
// on an in-memory store), and a replay. The audit log's own goroutine
// (hash, redaction, batching) runs beside it: cpu-ns/op counts it, ns/op
// does not.
func BenchmarkPipelineGovernance(b *testing.B) {
	trivial := backendFunc(func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	log := audit.New(&audit.Options{Store: discardCalls{}, QueueSize: 1 << 16})
	go log.Run()
	defer log.Close()
	p := New(&Options{Tables: mustRegistry(b), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: trivial},
		Recorder: nopRecorder{}, Idempotency: &memKeys{rows: map[string]*mcpgate.IdempotencyClaim{}}, Auditor: log})
	agent := &mcpgate.Agent{ID: "a1"}
	cred := &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k", UserID: "u"}
	run := func(b *testing.B, args func(i int) json.RawMessage) {
		b.ReportAllocs()
		i := 0
		start := proctime.Self()
		defer func() { b.ReportMetric(float64(proctime.Self()-start)/float64(b.N), "cpu-ns/op") }()
		for b.Loop() {
			i++
			call := &mcpgate.Call{Agent: agent, ToolName: "order", Arguments: args(i), Caller: cred.Caller(), Notifier: mcpgate.NopNotifier{}}
			if _, err := p.Call(context.Background(), call); err != nil {
				b.Fatal(err)
			}
		}
	}
	plain := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high"}`)
	b.Run("no key", func(b *testing.B) { run(b, func(int) json.RawMessage { return plain }) })
	b.Run("new key", func(b *testing.B) {
		run(b, func(i int) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"customer":"ACME Corp","quantity":12,"priority":"high","idempotency_key":"k-%d"}`, i))
		})
	})
	replay := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high","idempotency_key":"same"}`)
	b.Run("replay", func(b *testing.B) { run(b, func(int) json.RawMessage { return replay }) })
}

// BenchmarkPipelineCPU is BenchmarkPipelineCall with the process CPU per
// call reported, the baseline of BenchmarkPipelineGovernance.
func BenchmarkPipelineCPU(b *testing.B) {
	trivial := backendFunc(func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	p := New(&Options{Tables: mustRegistry(b), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: trivial}, Recorder: nopRecorder{}})
	agent := &mcpgate.Agent{ID: "a1"}
	args := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high"}`)
	b.ReportAllocs()
	start := proctime.Self()
	for b.Loop() {
		call := &mcpgate.Call{Agent: agent, ToolName: "order", Arguments: args, Notifier: mcpgate.NopNotifier{}}
		if _, err := p.Call(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(proctime.Self()-start)/float64(b.N), "cpu-ns/op")
}
