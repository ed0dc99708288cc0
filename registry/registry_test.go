package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// fakeSource is an in-memory Source with a settable generation that counts
// how often it is read.
type fakeSource struct {
	mu     sync.Mutex
	gen    int64
	agents []*mcpgate.Agent
	skills []*mcpgate.Skill
	// genErr, agentsErr and skillsErr, when set, fail the matching method.
	genErr, agentsErr, skillsErr error
	gens, agentLists, skillLists int
}

func (s *fakeSource) Generation(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gens++
	return s.gen, s.genErr
}

func (s *fakeSource) ListAgents(_ context.Context, f mcpgate.AgentFilter) ([]*mcpgate.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agentLists++
	if f != (mcpgate.AgentFilter{}) {
		return nil, errors.New("registry must list every agent")
	}
	return slices.Clone(s.agents), s.agentsErr
}

func (s *fakeSource) ListSkills(_ context.Context, agentID string) ([]*mcpgate.Skill, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skillLists++
	if agentID != "" {
		return nil, errors.New("registry must list every agent's skills")
	}
	return slices.Clone(s.skills), s.skillsErr
}

// set replaces the source's content and generation.
func (s *fakeSource) set(gen int64, agents []*mcpgate.Agent, skills ...*mcpgate.Skill) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen, s.agents, s.skills = gen, agents, skills
}

// bump moves the generation without changing anything else.
func (s *fakeSource) bump() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
}

// counts returns how often each method was called.
func (s *fakeSource) counts() [3]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return [3]int{s.gens, s.agentLists, s.skillLists}
}

func TestRegistryReload(t *testing.T) {
	src := &fakeSource{}
	src.set(1, agents("a1", "a2"),
		newSkill("a1", "crm", "", newTool("search"), newTool("get")),
		newSkill("a1", "wiki", "w_", newTool("search")))
	r := New(src, nil)
	if _, ok := r.Table("a1"); ok {
		t.Fatal("Table before Reload: ok = true")
	}
	mustReload(t, r)
	if diff := cmp.Diff([]string{"get", "search", "w_search"}, toolNames(t, r, "a1")); diff != "" {
		t.Errorf("a1 tools (-want +got):\n%s", diff)
	}
	if names := toolNames(t, r, "a2"); len(names) != 0 {
		t.Errorf("a2 tools = %v, want none", names)
	}
	if _, ok := r.Table("nope"); ok {
		t.Error("Table(unknown agent): ok = true")
	}
	if got, want := src.counts(), [3]int{1, 1, 1}; got != want {
		t.Errorf("source calls = %v, want %v", got, want)
	}
}

func TestTables(t *testing.T) {
	src := &fakeSource{}
	r := New(src, nil)
	if got := r.Tables(); len(got) != 0 {
		t.Fatalf("Tables before Reload = %d tables, want none", len(got))
	}
	src.set(1, agents("zeta", "alpha", "mid"),
		newSkill("mid", "crm", "", newTool("search")),
		newSkill("alpha", "wiki", "", newTool("lookup"), newTool("get")))
	mustReload(t, r)
	var got [][]string
	for _, tbl := range r.Tables() {
		got = append(got, append([]string{tbl.Agent.ID}, entryNames(tbl)...))
	}
	want := [][]string{{"alpha", "get", "lookup"}, {"mid", "search"}, {"zeta"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tables (-want +got):\n%s", diff)
	}
	if tbl, _ := r.Table("mid"); r.Tables()[1] != tbl {
		t.Error("Tables()[1] is not the table Table(\"mid\") returns")
	}
}

func TestReloadUnchangedGeneration(t *testing.T) {
	src := &fakeSource{}
	src.set(7, agents("a1"), newSkill("a1", "crm", "", newTool("search")))
	r := New(src, nil)
	mustReload(t, r)
	before, _ := r.Table("a1")

	src.set(7, agents("a1"), newSkill("a1", "crm", "", newTool("other")))
	mustReload(t, r)
	mustReload(t, r)
	if got, want := src.counts(), [3]int{3, 1, 1}; got != want {
		t.Errorf("source calls = %v, want %v: lists re-read without a generation change", got, want)
	}
	if after, _ := r.Table("a1"); after != before {
		t.Error("table replaced although the generation did not move")
	}

	src.bump()
	mustReload(t, r)
	if diff := cmp.Diff([]string{"other"}, toolNames(t, r, "a1")); diff != "" {
		t.Errorf("after generation change (-want +got):\n%s", diff)
	}
}

func TestOnChange(t *testing.T) {
	src := &fakeSource{}
	src.set(1, agents("a1", "a2", "a4"),
		newSkill("a1", "crm", "", newTool("search")),
		newSkill("a2", "wiki", "", newTool("search")),
		newSkill("a4", "mail", "", newTool("send")))
	var calls [][]string
	r := New(src, &Options{OnChange: func(ids []string) {
		calls = append(calls, slices.Sorted(slices.Values(ids)))
	}})
	mustReload(t, r)
	if len(calls) != 0 {
		t.Fatalf("OnChange on first load: %v", calls)
	}

	// a1's tools change, a2's policy changes (not its tool list), a3 is new
	// and a4 is gone.
	wiki := newSkill("a2", "wiki", "", newTool("search"))
	wiki.Timeout = mcpgate.Duration(time.Second)
	src.set(2, agents("a1", "a2", "a3"),
		newSkill("a1", "crm", "", newTool("search"), newTool("get")),
		wiki,
		newSkill("a3", "docs", "", newTool("read")))
	mustReload(t, r)
	if diff := cmp.Diff([][]string{{"a1", "a3"}}, calls); diff != "" {
		t.Errorf("OnChange calls (-want +got):\n%s", diff)
	}
	if _, ok := r.Table("a4"); ok {
		t.Error("removed agent a4 still has a table")
	}

	src.bump()
	mustReload(t, r)
	if len(calls) != 1 {
		t.Errorf("OnChange called for a reload that changed no tool list: %v", calls[1:])
	}
}

// A skill that no longer compiles is left out with a log line; the
// agent's other skills and other agents are served.
func TestReloadLeavesOutBrokenSkill(t *testing.T) {
	var logs bytes.Buffer
	src := &fakeSource{}
	broken := newSkill("a1", "crm", "", &mcpgate.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)})
	src.set(1, agents("a1", "a2"), broken, newSkill("a1", "docs", "", newTool("read")), newSkill("a2", "wiki", "", newTool("search")))
	r := New(src, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	mustReload(t, r)
	if diff := cmp.Diff([]string{"read"}, toolNames(t, r, "a1")); diff != "" {
		t.Errorf("agent with a broken skill (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"search"}, toolNames(t, r, "a2")); diff != "" {
		t.Errorf("healthy agent tools (-want +got):\n%s", diff)
	}
	for _, want := range []string{"skill not served", "agent=a1", "skill=crm", "external $ref"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %q lacks %q", logs.String(), want)
		}
	}
}

func TestReloadErrors(t *testing.T) {
	boom := errors.New("database is down")
	tests := []struct {
		name string
		fail func(s *fakeSource)
	}{
		{"generation", func(s *fakeSource) { s.genErr = boom }},
		{"agents", func(s *fakeSource) { s.agentsErr = boom }},
		{"skills", func(s *fakeSource) { s.skillsErr = boom }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{}
			src.set(1, agents("a1"), newSkill("a1", "crm", "", newTool("search")))
			r := New(src, nil)
			mustReload(t, r)

			src.set(2, agents("a1"), newSkill("a1", "crm", "", newTool("get")))
			src.mu.Lock()
			tt.fail(src)
			src.mu.Unlock()
			if err := r.Reload(context.Background()); !errors.Is(err, boom) {
				t.Fatalf("Reload = %v, want %v", err, boom)
			}
			if diff := cmp.Diff([]string{"search"}, toolNames(t, r, "a1")); diff != "" {
				t.Errorf("tables after a failed reload (-want +got):\n%s", diff)
			}

			src.mu.Lock()
			src.genErr, src.agentsErr, src.skillsErr = nil, nil, nil
			src.mu.Unlock()
			mustReload(t, r)
			if diff := cmp.Diff([]string{"get"}, toolNames(t, r, "a1")); diff != "" {
				t.Errorf("failed generation not retried (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReloadConcurrentWithReads(t *testing.T) {
	src := &fakeSource{}
	src.set(1, agents("a1"), newSkill("a1", "crm", "", newTool("search")))
	r := New(src, &Options{OnChange: func([]string) {}})
	mustReload(t, r)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if tbl, ok := r.Table("a1"); !ok || len(tbl.Tools) != 1 {
					t.Error("a1 lost its table during a reload")
					return
				}
			}
		})
		wg.Go(func() {
			for range 10 {
				src.bump()
				if err := r.Reload(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		src := &fakeSource{}
		src.set(1, agents("a1"), newSkill("a1", "crm", "", newTool("search")))
		r := New(src, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		mustReload(t, r)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			r.Watch(ctx, time.Minute)
			close(done)
		}()

		src.set(2, agents("a1"), newSkill("a1", "crm", "", newTool("get")))
		time.Sleep(time.Minute)
		synctest.Wait()
		if diff := cmp.Diff([]string{"get"}, toolNames(t, r, "a1")); diff != "" {
			t.Errorf("Watch did not pick up the change (-want +got):\n%s", diff)
		}

		src.mu.Lock()
		src.genErr = errors.New("database is down")
		src.mu.Unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		if !strings.Contains(logs.String(), "registry reload failed") {
			t.Errorf("failed reload not logged: %q", logs.String())
		}

		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Error("Watch still running after its context ended")
		}
	})
}

// agents returns agents with the given IDs.
func agents(ids ...string) []*mcpgate.Agent {
	var out []*mcpgate.Agent
	for _, id := range ids {
		out = append(out, &mcpgate.Agent{ID: id, OwnerID: "u1", MCPEnabled: true})
	}
	return out
}

// mustReload reloads r or stops the test.
func mustReload(tb testing.TB, r *Registry) {
	tb.Helper()
	if err := r.Reload(context.Background()); err != nil {
		tb.Fatalf("Reload: %v", err)
	}
}

// toolNames returns the exposed names of an agent's tools, failing the
// test when the agent has no table.
func toolNames(tb testing.TB, r *Registry, agentID string) []string {
	tb.Helper()
	tbl, ok := r.Table(agentID)
	if !ok {
		tb.Fatalf("Table(%q): no table", agentID)
	}
	return entryNames(tbl)
}

// entryNames returns the exposed names of a table's tools, in its order.
func entryNames(tbl *Table) []string {
	names := []string{}
	for _, e := range tbl.Tools {
		names = append(names, e.Name)
	}
	return names
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
