package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/agent"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/rest"
	"github.com/mcpgate/mcpgate/upstream"
)

// backends builds the backend of each kind of skill, sharing one SSRF
// guard: REST, the upstream MCP servers' relay (which tells the MCP server's
// sessions of upstream notifications, so m.mcp must exist), and agents over
// the message bus.
func (m *Main) backends() (map[mcpgate.SkillKind]mcpgate.Backend, error) {
	guard := netguard.New(nil)
	b, err := m.openBus()
	if err != nil {
		return nil, err
	}
	m.bus = b
	m.upstream = upstream.New(&upstream.Options{
		Skills: m.store, Health: m.store, Guard: guard, Sessions: m.mcp, Env: m.Env.LookupEnv, Logger: m.logger,
		Changed: m.reloadRegistry, ClientName: "mcpgate", ClientVersion: mcpgate.Version,
	})
	m.closers = append(m.closers, m.upstream.Close)
	return map[mcpgate.SkillKind]mcpgate.Backend{
		mcpgate.SkillMCP:  m.upstream,
		mcpgate.SkillREST: rest.New(&rest.Options{LookupEnv: m.Env.LookupEnv, AllowPrivate: m.Config.AllowPrivate, Guard: guard}),
		mcpgate.SkillAgent: agent.New(&agent.Options{
			Bus: b, Channels: m.store, Guard: guard, LookupEnv: m.Env.LookupEnv, Logger: m.logger,
		}),
	}, nil
}

// openBus returns the message bus: in-process on SQLite, and across
// replicas through LISTEN/NOTIFY on PostgreSQL. Close closes it, then its
// broker.
func (m *Main) openBus() (*bus.Bus, error) {
	opts := &bus.Options{Store: m.store, Logger: m.logger}
	var broker *postgres.Broker
	if dsn := m.Config.store.postgresDSN(); dsn != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var err error
		if broker, err = postgres.OpenBroker(ctx, dsn, &postgres.BrokerOptions{Logger: m.logger}); err != nil {
			return nil, fmt.Errorf("message bus: %w", err)
		}
		opts.Broker = broker
	}
	b := bus.New(opts)
	m.closers = append(m.closers, func() error {
		err := b.Close()
		if broker != nil {
			err = errors.Join(err, broker.Close())
		}
		return err
	})
	return b, nil
}

// skillsLoaded matches the upstream connections to the skills the registry
// loaded.
func (m *Main) skillsLoaded(skills []*mcpgate.Skill) {
	if m.upstream != nil {
		m.upstream.Sync(context.Background(), skills)
	}
}

// sessionClosed releases what an ended MCP session held upstream.
func (m *Main) sessionClosed(sessionID string) {
	if m.upstream != nil {
		m.upstream.CloseSession(sessionID)
	}
}

// reloadRegistry reloads the registry after the upstream relay stored
// tools it discovered.
func (m *Main) reloadRegistry(ctx context.Context) {
	if err := m.registry.Reload(ctx); err != nil {
		m.logger.Warn("registry reload after discovery", "err", err)
	}
}
