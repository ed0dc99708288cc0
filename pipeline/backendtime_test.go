package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// backendRecorder keeps ObserveBackend's observations.
type backendRecorder struct {
	mu  sync.Mutex
	obs []string
	d   []time.Duration
}

func (r *backendRecorder) ObserveBackend(agent, skill, kind, outcome string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.obs = append(r.obs, agent+"/"+skill+"/"+kind+"/"+outcome)
	r.d = append(r.d, d)
}

func (r *backendRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.obs)
}

// TestBackendTimed checks that the backend's own time is recorded by
// skill, and that calls refused before the backend record none.
func TestBackendTimed(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	rec := &backendRecorder{}
	p := New(&Options{
		Tables: mustRegistry(t),
		Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: backendFunc(func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
			mu.Lock()
			now = now.Add(700 * time.Millisecond)
			mu.Unlock()
			return mcpgate.ErrorResult("down"), nil
		})},
		BackendRecorder: rec,
		Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return now
		},
	})
	for _, tool := range []string{"echo", "nosuch"} {
		p.Call(context.Background(), &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: tool, Notifier: mcpgate.NopNotifier{}})
	}
	if diff := cmp.Diff([]string{"a1/crm/rest/tool_error"}, rec.obs); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
	if len(rec.d) == 1 && rec.d[0] != 700*time.Millisecond {
		t.Errorf("backend time %s, want 700ms", rec.d[0])
	}
}
