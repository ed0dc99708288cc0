// Package registry keeps every agent's tool table in memory, compiled and
// ready for the hot path, and reloads it when the store's generation moves.
// It also checks a set of skills before they are stored: valid schemas and
// no two tools with one name.
//
// It depends on the root package and the JSON Schema library only; it must
// not import a store, a backend or the transport.
package registry

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Source is what the registry reads agents and skills from.
type Source interface {
	ListAgents(ctx context.Context, f mcpgate.AgentFilter) ([]*mcpgate.Agent, error)
	ListSkills(ctx context.Context, agentID string) ([]*mcpgate.Skill, error)
	Generation(ctx context.Context) (int64, error)
}

// Options configure a Registry. The zero value is usable.
type Options struct {
	// OnChange is called after a reload with the agents whose tool lists
	// changed, so that their open sessions can be told.
	OnChange func(agentIDs []string)
	// OnLoad is called after every load with all skills as stored, those
	// without tools too, so that backends holding connections (upstream
	// MCP servers) can match them. It must not block.
	OnLoad func(skills []*mcpgate.Skill)
	Logger *slog.Logger
}

// Registry holds the current tool table of every agent.
type Registry struct {
	src  Source
	opts Options

	reload sync.Mutex // serializes reloads
	mu     sync.RWMutex
	gen    int64
	loaded bool
	tables map[string]*Table
}

// New returns a registry reading from src. Call Reload before use.
func New(src Source, opts *Options) *Registry {
	r := &Registry{src: src, tables: map[string]*Table{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Logger == nil {
		r.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return r
}

// Table returns an agent's current table; ok is false for an unknown agent.
func (r *Registry) Table(agentID string) (t *Table, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok = r.tables[agentID]
	return t, ok
}

// Agent returns the agent with the ID as last loaded, and whether there is
// one. The agent is shared: callers must not change it.
func (r *Registry) Agent(id string) (*mcpgate.Agent, bool) {
	t, ok := r.Table(id)
	if !ok {
		return nil, false
	}
	return t.Agent, true
}

// Tables returns every agent's current table, sorted by agent ID, for
// callers that serve the tools of several agents at once.
func (r *Registry) Tables() []*Table {
	r.mu.RLock()
	out := make([]*Table, 0, len(r.tables))
	for _, t := range r.tables {
		out = append(out, t)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Table) int { return strings.Compare(a.Agent.ID, b.Agent.ID) })
	return out
}

// Reload reads every agent and skill again if the store's generation moved
// since the last load.
func (r *Registry) Reload(ctx context.Context) error {
	r.reload.Lock()
	defer r.reload.Unlock()
	gen, err := r.src.Generation(ctx)
	if err != nil {
		return err
	}
	r.mu.RLock()
	fresh := r.loaded && gen == r.gen
	r.mu.RUnlock()
	if fresh {
		return nil
	}
	tables, skills, err := r.load(ctx)
	if err != nil {
		return err
	}
	r.swap(gen, tables)
	if r.opts.OnLoad != nil {
		r.opts.OnLoad(skills)
	}
	return nil
}

// load builds every agent's table and returns the skills it read.
func (r *Registry) load(ctx context.Context) (map[string]*Table, []*mcpgate.Skill, error) {
	agents, err := r.src.ListAgents(ctx, mcpgate.AgentFilter{})
	if err != nil {
		return nil, nil, err
	}
	skills, err := r.src.ListSkills(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	byAgent := map[string][]*mcpgate.Skill{}
	for _, s := range skills {
		byAgent[s.AgentID] = append(byAgent[s.AgentID], s)
	}
	tables := make(map[string]*Table, len(agents))
	for _, a := range agents {
		tables[a.ID] = r.buildServable(a, byAgent[a.ID])
	}
	return tables, skills, nil
}

// buildServable builds an agent's table as Servable does, logging each
// skill left out.
func (r *Registry) buildServable(a *mcpgate.Agent, skills []*mcpgate.Skill) *Table {
	t, left := Servable(a, skills)
	for _, s := range skills {
		if err := left[s.Name]; err != nil {
			r.opts.Logger.Error("skill not served", "agent", a.ID, "skill", s.Name, "err", err)
		}
	}
	return t
}

// Servable builds an agent's table as tools/list serves it: from the
// skills that build together, leaving out each skill that no longer
// compiles or clashes with the ones before it, so one bad skill never hides
// the rest. left holds the error of each skill left out, by skill name.
// Every view of an agent's tools (the CLI's counts too) uses it, so that
// they show what tools/list serves, the chat tools of agent skills included.
func Servable(a *mcpgate.Agent, skills []*mcpgate.Skill) (t *Table, left map[string]error) {
	t, err := build(a, skills)
	if err == nil {
		return t, nil
	}
	left = map[string]error{}
	var kept []*mcpgate.Skill
	for _, s := range skills {
		if _, err := build(a, append(kept[:len(kept):len(kept)], s)); err != nil {
			left[s.Name] = err
			continue
		}
		kept = append(kept, s)
	}
	t, _ = build(a, kept)
	return t, left
}

// swap installs new tables and reports agents whose tool lists changed.
func (r *Registry) swap(gen int64, tables map[string]*Table) {
	r.mu.Lock()
	old, wasLoaded := r.tables, r.loaded
	r.tables, r.gen, r.loaded = tables, gen, true
	r.mu.Unlock()
	if !wasLoaded || r.opts.OnChange == nil {
		return
	}
	var changed []string
	for id, t := range tables {
		if prev, ok := old[id]; !ok || prev.digest != t.digest {
			changed = append(changed, id)
		}
	}
	if len(changed) > 0 {
		r.opts.OnChange(changed)
	}
}

// Watch reloads every interval until ctx ends, so that changes made by
// another process (the admin CLI, another replica) are picked up.
func (r *Registry) Watch(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := r.Reload(ctx); err != nil && ctx.Err() == nil {
				r.opts.Logger.Warn("registry reload failed", "err", err)
			}
		}
	}
}
