package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/agent"
	"github.com/mcpgate/mcpgate/api"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/auth/oauth"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/events"
	"github.com/mcpgate/mcpgate/files"
	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/h1"
	"github.com/mcpgate/mcpgate/handsai"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/peer"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/rest"
	"github.com/mcpgate/mcpgate/server"
	"github.com/mcpgate/mcpgate/skilledit"
	"github.com/mcpgate/mcpgate/ui"
	"github.com/mcpgate/mcpgate/upstream"
)

// newUpstream returns the relay to upstream MCP servers, connecting
// through guard. It publishes the tools it stores and its notifications for
// sessions on the hub; Close stops its connections.
func (m *Main) newUpstream(hub *events.Hub, guard *netguard.Guard) *upstream.Manager {
	up := upstream.New(&upstream.Options{
		Skills: m.store, Health: m.store, Guard: guard, Sessions: hub, Env: m.Env.LookupEnv, Logger: m.logger,
		Changed: hub.SkillsStored, ClientName: "mcpgate", ClientVersion: mcpgate.Version,
	})
	m.closers = append(m.closers, up.Close)
	return up
}

// backends returns the backend of each kind of skill, sharing one SSRF
// guard with the upstream relay: the relay, REST, and agents over the
// message bus b.
func (m *Main) backends(b *bus.Bus, guard *netguard.Guard) map[mcpgate.SkillKind]mcpgate.Backend {
	return map[mcpgate.SkillKind]mcpgate.Backend{
		mcpgate.SkillMCP:  m.upstream,
		mcpgate.SkillREST: rest.New(&rest.Options{LookupEnv: m.Env.LookupEnv, AllowPrivate: m.Config.AllowPrivate, Guard: guard, Results: m.fileResults(), Files: m.fileResults()}),
		mcpgate.SkillAgent: agent.New(&agent.Options{
			Bus: b, Channels: m.store, Guard: guard, LookupEnv: m.Env.LookupEnv, Logger: m.logger,
			PresenceCheck: m.Config.AgentHeartbeat,
		}),
	}
}

// newPeers returns what carries the MCP transport's messages to the other
// replicas through the store and the bus b: on PostgreSQL only, since a
// SQLite data dir has one process. Close stops it.
func (m *Main) newPeers(b *bus.Bus) mcp.Peers {
	if m.Config.store.postgresDSN() == "" {
		return nil
	}
	p := peer.New(&peer.Options{Store: m.store, Signals: b, Logger: m.logger})
	m.closers = append(m.closers, p.Close)
	return p
}

// newEventLog returns what keeps the transport's SSE events in the
// database for resumptions after this replica died: only with peers (on
// PostgreSQL). Close writes what is queued.
func (m *Main) newEventLog(peers mcp.Peers) mcp.EventLog {
	if peers == nil {
		return nil
	}
	l := peer.NewEventLog(&peer.EventLogOptions{Store: m.store, Logger: m.logger})
	m.closers = append(m.closers, l.Close)
	return l
}

// newMCP returns the MCP transport in front of the gateway; it publishes
// the sessions (and held 2026-07-28 calls) it stops serving on the hub,
// signs requestState with signer, and reaches the other replicas through
// peers (nil with one process).
func (m *Main) newMCP(gw *gateway.Gateway, hub *events.Hub, signer mcp.StateSigner, peers mcp.Peers) *mcp.Server {
	return mcp.New(&mcp.Options{
		Peers: peers, EventLog: m.newEventLog(peers),
		Sessions: m.store, Gateway: gw, SessionClosed: hub.SessionClosed, RequestState: signer, InputWait: m.Config.InputWait,
		ServerName: "mcpgate", ServerVersion: mcpgate.Version,
		MaxBodyBytes: m.Config.MaxBodyBytes, PageSize: m.Config.PageSize, Logger: m.logger,
		AccessLog: m.logger, SlowCall: m.Config.SlowCall, Tracer: m.tracer, Tasks: m.tasks,
	})
}

// subscribe lets each part hear the events published against the order
// the parts are built in: the upstream relay follows the skills loaded and
// releases what ended sessions held; the registry reloads after the relay
// stored tools; the transport tells sessions of changed tool lists and of
// the relay's notifications.
func (m *Main) subscribe(hub *events.Hub) {
	hub.OnSkillsLoaded(func(skills []*mcpgate.Skill) { m.upstream.Sync(context.Background(), skills) })
	hub.OnSessionClosed(m.upstream.CloseSession)
	hub.OnSkillsStored(m.reloadRegistry)
	hub.OnToolsChanged(func(agentIDs []string) {
		for _, id := range agentIDs {
			m.mcp.NotifyToolsChanged(id)
		}
	})
	hub.OnNotify(m.mcp)
}

// newServer returns the HTTP surface: the MCP transport behind its guard
// and authentication, the management API, and the HandsAI-compatible
// surface, which calls through caller (the same gateway as the transport).
func (m *Main) newServer(caller handsai.Caller, b *bus.Bus, met *metrics.Metrics, hub *events.Hub) (*server.Server, error) {
	authn := auth.NewAuthenticator(m.store, &auth.Options{Logger: m.logger, Tokens: m.oauth})
	m.authn = authn
	return server.New(&server.Options{
		Store: m.store, Tables: m.registry, Auth: authn,
		HandsAI: handsai.New(&handsai.Options{Tables: m.registry, Caller: caller, Logger: m.logger}),
		API: api.New(&api.Options{
			Store: m.store, Skills: skilledit.Editor{Store: m.store}, Auth: authn, Changed: m.regSync.Changed, Forget: authn.Forget,
			Bus: b, Agents: m.registry, Visibility: m.Config.AgentVisibility, Logger: m.logger, Approvals: m.approvals, Tasks: m.tasks,
			Blobs: m.blobs(), Signer: m.fileSigner(),
			PublicURL: m.Config.PublicURL, MaxUploadBytes: m.Config.MaxUploadBytes, Webhooks: m.webhooks.service,
		}),
		MCP: m.mcp, Metrics: met, MetricsAccess: m.metricsAccess(), PublicURL: m.Config.PublicURL,
		AllowedHosts: m.Config.AllowedHosts, AllowedOrigins: m.Config.AllowedOrigins,
		Mounts: m.mounts(), OAuth: m.oauth, Logger: m.logger, Readiness: readiness{m},
		UI: m.newUI(authn, hub, b),
	})
}

// newUI returns the dashboard; Close and StartDrain end its live streams.
// Its approvals queues hear of other replicas' approvals through the bus b.
func (m *Main) newUI(authn *auth.Authenticator, hub *events.Hub, b *bus.Bus) *ui.Handler {
	m.ui = ui.New(&ui.Options{
		Store: m.store, Sessions: m.oauth, LoginURL: oauth.LoginURL, PublicURL: m.Config.PublicURL,
		Tables: m.registry, Changed: m.regSync.Changed, Forget: authn.Forget, Logger: m.logger,
		Calls: m.store, Approvals: m.approvals, Events: hub, Signals: b,
	})
	return m.ui
}

// newHTTP returns the HTTP server for h. Open SSE streams never go idle by
// themselves: Close ends them (mcp.Server.Close) before Shutdown, and Drain
// ends the GET streams first and lets the calls' streams finish.
func (m *Main) newHTTP(h http.Handler) *front {
	errs := slog.NewLogLogger(m.logger.Handler(), slog.LevelWarn)
	const headTimeout, idle = 10 * time.Second, 2 * time.Minute
	return &front{
		fast: &h1.Server{Handler: h, ReadHeaderTimeout: headTimeout, IdleTimeout: idle, ErrorLog: errs},
		std:  &http.Server{Handler: h, ReadHeaderTimeout: headTimeout, IdleTimeout: idle, ErrorLog: errs},
	}
}

// openBus returns the message bus: in-process on SQLite, and across
// replicas through LISTEN/NOTIFY on PostgreSQL, where messages are not
// handed to streams as they are posted (a claim is cheaper there; see
// bus.Options.NoHandoff). Close closes it, then its broker.
func (m *Main) openBus() (*bus.Bus, error) {
	opts := &bus.Options{Store: m.store, Logger: m.logger, Heartbeat: m.Config.AgentHeartbeat, PresenceTTL: m.Config.AgentPresenceTTL}
	var broker *postgres.Broker
	if dsn := m.Config.store.postgresDSN(); dsn != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var err error
		if broker, err = postgres.OpenBroker(ctx, dsn, &postgres.BrokerOptions{Logger: m.logger}); err != nil {
			return nil, fmt.Errorf("message bus: %w", err)
		}
		opts.Broker, opts.NoHandoff = broker, true
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

// reloadRegistry reloads the registry, here and on the other replicas,
// after the upstream relay stored tools it discovered.
func (m *Main) reloadRegistry(ctx context.Context) {
	if err := m.regSync.Changed(ctx); err != nil {
		m.logger.Warn("registry reload after discovery", "err", err)
	}
}

// fileSigner returns the signer of file URLs, one for the whole gateway.
func (m *Main) fileSigner() *files.Signer {
	if m.signer == nil {
		m.signer = files.NewSigner(m.keys, nil)
	}
	return m.signer
}

// blobs returns the store of file bytes, under --data-dir/files.
func (m *Main) blobs() files.Dir {
	return files.Dir{Path: filepath.Join(m.Config.store.dataDir, "files")}
}

// fileResults returns the keeper of results too big to return whole,
// which resources/read reads back; one for the whole gateway.
func (m *Main) fileResults() *files.Results {
	if m.results == nil {
		m.results = &files.Results{Files: m.store, Blobs: m.blobs(), Signer: m.fileSigner(), PublicURL: m.Config.PublicURL, Max: m.Config.MaxUploadBytes}
	}
	return m.results
}

// fileSweepEvery is how often expired and retained-out files are swept.
const fileSweepEvery = 10 * time.Minute

// fileSweeper returns the sweeper of expired upload reservations, uploads
// never completed and files past --file-retention.
func (m *Main) fileSweeper() *files.Sweeper {
	return &files.Sweeper{Files: m.store, Blobs: m.blobs(), Retention: m.Config.FileRetention, Logger: m.logger}
}
