// Package upstream is the backend for skills of kind mcp: it keeps a
// connection to each skill's upstream MCP server (Streamable HTTP through
// the SSRF guard, or a supervised child process over stdio) with the
// gateway's own client (package mcpclient), discovers the upstream's tools into the
// skill, relays tool calls with their results as the upstream's own bytes,
// relays resources, prompts and completions, forwards the upstream's
// server→client requests to the MCP host of the call in flight, and records
// each skill's health.
//
// The package imports the root mcpgate package, netguard, h1, mcpclient,
// internal/lazyctx and the standard library (never the go-sdk, which is
// only a test fixture);
// it must not import the transport (mcp), the
// stores, the pipeline, other backends or the server.
package upstream

import (
	"context"
	"log/slog"
	"os"
	"sync"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/h1"
	"github.com/mcpgate/mcpgate/netguard"
)

// SkillStore is the part of the store the Manager uses to save discovered
// tools.
type SkillStore interface {
	PutSkill(ctx context.Context, s *mcpgate.Skill) error
	FindSkill(ctx context.Context, agentID, name string) (*mcpgate.Skill, error)
}

// Options configures a Manager. Nil, or a zero field, gives the default.
type Options struct {
	// Skills is where discovered tools are saved; without it discovery
	// only updates the health.
	Skills SkillStore
	// Health records each skill's connection state; optional.
	Health mcpgate.SkillHealthStore
	// Guard holds the outbound HTTP clients; default a new netguard.Guard.
	// A skill's AllowPrivate picks the policy.
	Guard *netguard.Guard
	// Sessions reaches the MCP sessions outside calls: list_changed and
	// resources/updated notifications; optional.
	Sessions mcpgate.SessionNotifier
	// Changed is called after discovered tools were saved, so that the
	// caller reloads its registry; optional.
	Changed func(ctx context.Context)
	// Env finds the secrets of ${env:NAME} references; default
	// os.LookupEnv.
	Env func(string) (string, bool)
	// Logger gets connection events and the stderr of stdio servers;
	// default slog.Default().
	Logger *slog.Logger
	// ClientName and ClientVersion are what the gateway calls itself in
	// initialize; default "mcpgate" and mcpgate.Version.
	ClientName, ClientVersion string
}

// Manager runs the upstream connections of every mcp skill. It implements
// mcpgate.Backend and is safe for concurrent use.
type Manager struct {
	skills        SkillStore
	health        mcpgate.SkillHealthStore
	guard         *netguard.Guard
	plain         [2]*h1.Transport // per policy (strict, private): plain-HTTP upstreams
	sessions      mcpgate.SessionNotifier
	changed       func(ctx context.Context)
	lookup        mcpgate.LookupFunc
	log           *slog.Logger
	clientName    string
	clientVersion string

	// writes are the health writes in flight (goWrite), which Close waits
	// for: none may reach the store after it.
	writes sync.WaitGroup

	mu     sync.Mutex
	links  map[linkKey]*link
	closed bool
	names  map[string]*agentNames // per agent: relayed prompt and resource names
	maxOwn int                    // maxOwnSessions; tests lower it
}

var _ mcpgate.Backend = (*Manager)(nil)

// linkKey names a skill.
type linkKey struct{ agentID, skill string }

// New returns a Manager with no connections; Sync starts them.
func New(opts *Options) *Manager {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Manager{
		skills: o.Skills, health: o.Health, guard: o.Guard, sessions: o.Sessions, changed: o.Changed,
		lookup: o.Env, log: o.Logger, clientName: o.ClientName, clientVersion: o.ClientVersion,
		links: map[linkKey]*link{}, names: map[string]*agentNames{}, maxOwn: maxOwnSessions,
	}
	if m.guard == nil {
		m.guard = netguard.New(nil)
	}
	for i, p := range []netguard.Policy{{}, {AllowPrivate: true}} {
		m.plain[i] = &h1.Transport{Dial: m.guard.Dialer(p), Next: m.guard.Client(p).Transport}
	}
	if m.lookup == nil {
		m.lookup = os.LookupEnv
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.clientName == "" {
		m.clientName = "mcpgate"
	}
	if m.clientVersion == "" {
		m.clientVersion = mcpgate.Version
	}
	return m
}

// Sync makes the running connections match skills, the skills of kind mcp
// of every agent (others are ignored): it starts new ones, restarts those
// whose connection settings changed and stops those no longer listed.
// Connecting and discovery run in the background.
func (m *Manager) Sync(ctx context.Context, skills []*mcpgate.Skill) {
	want := map[linkKey]*mcpgate.Skill{}
	for _, sk := range skills {
		if sk.Kind == mcpgate.SkillMCP {
			want[linkKey{sk.AgentID, sk.Name}] = sk
		}
	}
	var stop []*link
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	for k, l := range m.links {
		if sk, ok := want[k]; !ok || settingsHash(sk) != l.hash {
			stop = append(stop, l)
			delete(m.links, k)
		} else {
			l.setSkill(sk)
		}
	}
	for k, sk := range want {
		if m.links[k] == nil {
			m.links[k] = m.startLink(sk)
		}
	}
	m.mu.Unlock()
	for _, l := range stop {
		l.stop(ctx)
	}
}

// linkFor returns the running link of the skill, starting one when Sync
// has not (a call that arrives before the first Sync); nil once closed.
func (m *Manager) linkFor(sk *mcpgate.Skill) *link {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	k := linkKey{sk.AgentID, sk.Name}
	if l := m.links[k]; l != nil {
		return l
	}
	l := m.startLink(sk)
	m.links[k] = l
	return l
}

// agentLinks returns the links of an agent's skills, in a stable order.
func (m *Manager) agentLinks(agentID string) []*link {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*link
	for k, l := range m.links {
		if k.agentID == agentID {
			out = append(out, l)
		}
	}
	sortLinks(out)
	return out
}

// CloseSession forgets a downstream session that ended: its own upstream
// sessions close and its subscriptions go.
func (m *Manager) CloseSession(sessionID string) {
	m.mu.Lock()
	links := make([]*link, 0, len(m.links))
	for _, l := range m.links {
		links = append(links, l)
	}
	m.mu.Unlock()
	for _, l := range links {
		l.closeSession(sessionID)
	}
}

// Close stops every connection, killing stdio servers with their process
// groups, and waits until they are gone, and until the skills' health
// writes in flight have ended.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	links := m.links
	m.links = map[linkKey]*link{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range links {
		wg.Go(func() { l.stop(context.Background()) })
	}
	wg.Wait()
	for _, t := range m.plain {
		t.CloseIdleConnections()
	}
	m.writes.Wait()
	return nil
}
