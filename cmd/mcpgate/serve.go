package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/agentkit"
	"github.com/mcpgate/mcpgate/api"
	"github.com/mcpgate/mcpgate/audit"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/auth/oauth"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/demo"
	"github.com/mcpgate/mcpgate/events"
	"github.com/mcpgate/mcpgate/files"
	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/internal/logbuf"
	"github.com/mcpgate/mcpgate/internal/logtext"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/pipeline"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/seal"
	"github.com/mcpgate/mcpgate/server"
	"github.com/mcpgate/mcpgate/tasks"
	"github.com/mcpgate/mcpgate/ui"
	"github.com/mcpgate/mcpgate/upstream"
)

// ServeConfig holds the flags of `mcpgate serve`.
type ServeConfig struct {
	Addr           string
	PublicURL      string
	ConfigPath     string
	Demo           bool
	AllowedHosts   stringList
	AllowedOrigins stringList
	AllowPrivate   bool
	MaxBodyBytes   int64
	// MaxUploadBytes caps one file upload.
	MaxUploadBytes int64
	// FileRetention is how long an uploaded file, or a result stored as a
	// file, is kept.
	FileRetention time.Duration
	PageSize      int
	LogLevel      string
	// LogFormat is text or json.
	LogFormat string
	// SlowCall is the duration beyond which a request's access-log line is
	// a warning.
	SlowCall time.Duration
	// InputWait is how long a 2026-07-28 call that asked its client for
	// input waits for the retry with inputResponses.
	InputWait time.Duration
	// OTLPEndpoint, when set, is where traces go (OTLP over HTTP).
	OTLPEndpoint string
	ReloadEvery  time.Duration
	PprofAddr    string
	// SecretKey, when set, is the operator's key that seals stored secrets
	// (webhook signing secrets, the keys that sign access tokens and file
	// URLs); when empty the data directory's key file is used.
	SecretKey string
	// MetricsAddr, when set, serves /metrics there instead of on Addr.
	MetricsAddr string
	// AgentVisibility is how long a message delivered to an agent worker
	// waits for its acknowledgement before it is delivered again.
	AgentVisibility time.Duration
	// AgentHeartbeat is how often each replica refreshes the presence of
	// its agent workers (and waiting calls check it), and AgentPresenceTTL
	// how long a refresh stays valid: a replica that dies is known to be
	// gone within AgentPresenceTTL + 1.5 AgentHeartbeat.
	AgentHeartbeat, AgentPresenceTTL time.Duration
	// Governance holds the idempotency and audit log settings.
	Governance governanceFlags
	webhooks   webhookFlags
	store      storeFlags
	rateLimit  rateLimitFlag
	drain      drainFlags
	// ungoverned leaves the idempotency stage and the audit log out of the
	// pipeline: no flag sets it; benchmarks measure the stages' cost
	// against it.
	ungoverned bool
}

// Main is the running gateway: ParseFlags, then Run, then Close. Tests
// drive it in-process on port 0.
type Main struct {
	Config ServeConfig
	Env    *Env

	store    mcpgate.Store
	registry *registry.Registry
	regSync  registrySync
	oauth    *oauth.Server
	mcp      *mcp.Server
	upstream *upstream.Manager
	audit    *audit.Log
	ui       *ui.Handler
	authn    *auth.Authenticator // Close waits for its writes of key use
	// demoWorker answers the demo's agent skill in-process (--demo only).
	demoWorker *agentkit.Worker
	http       *front
	ln         net.Listener
	logger     *slog.Logger
	logOut     *logbuf.Writer // the logger's stderr, written out together
	logDelay   time.Duration  // how long logOut holds a line; logbuf's default when zero (tests set it)
	cancel     context.CancelFunc
	closers    []func() error
	workers    sync.WaitGroup // background loops that use the store
	done       chan struct{}

	// metricsLn is --metrics-addr's listener, when set, and
	// metricsHandler the metrics page it serves.
	metricsLn      net.Listener
	metricsHandler http.Handler
	retention      time.Duration // how long the audit log keeps calls
	approvals      *approvalDecider
	webhooks       *webhooks
	// stopWebhooks ends the webhook outbox and deliverer, after the calls
	// in flight published their events.
	stopWebhooks   context.CancelFunc
	tasks          *tasks.Service
	signer         *files.Signer // signs file URLs
	results        *files.Results
	tracer         mcpgate.Tracer
	secret         []byte                      // --secret-key or the data dir's key file, checked against the database's
	box            *seal.Box                   // seals stored secrets under secret
	keys           sealedKeys                  // the store, its signing keys sealed by box
	unlock         func() error                // releases the data dir's serve lock (SQLite)
	shutdownTracer func(context.Context) error // nil when tracing is off
}

// NewMain returns a Main writing to env.
func NewMain(env *Env) *Main { return &Main{Env: env, done: make(chan struct{})} }

// ParseFlags reads serve's flags and their MCPGATE_* variables.
func (m *Main) ParseFlags(args []string) error {
	c := &m.Config
	fs := newFlagSet(m.Env, "serve", "serve [flags]")
	c.store.register(fs)
	c.rateLimit.register(fs)
	c.Governance.register(fs)
	c.drain.register(fs)
	c.webhooks.register(fs)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8094", "address to listen on")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL clients use to reach the gateway (default: from --addr)")
	fs.StringVar(&c.ConfigPath, "config", "", "YAML config file applied at start and on SIGHUP")
	fs.BoolVar(&c.Demo, "demo", false, "create and serve the demo agent, its REST API and a key")
	fs.Var(&c.AllowedHosts, "allowed-hosts", "extra Host names accepted (comma-separated)")
	fs.Var(&c.AllowedOrigins, "allowed-origins", "extra browser Origins accepted (comma-separated)")
	fs.BoolVar(&c.AllowPrivate, "allow-private-networks", false, "let every skill reach loopback and private addresses")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", 4<<20, "largest MCP request body accepted")
	fs.Int64Var(&c.MaxUploadBytes, "max-upload-bytes", api.DefaultMaxUploadBytes, "largest file upload accepted (stored under --data-dir/files)")
	fs.DurationVar(&c.FileRetention, "file-retention", files.DefaultRetention, "how long uploaded files and results stored as files are kept before the sweep deletes them")
	fs.IntVar(&c.PageSize, "page-size", mcp.DefaultPageSize, "tools per tools/list page")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	fs.StringVar(&c.OTLPEndpoint, "otlp-endpoint", "", "export traces to this OTLP/HTTP URL, such as http://127.0.0.1:4318/v1/traces (default: from OTEL_EXPORTER_OTLP_ENDPOINT; off when unset)")
	fs.DurationVar(&c.SlowCall, "slow-call", mcp.DefaultSlowCall, "an MCP request slower than this is logged as a warning")
	fs.DurationVar(&c.InputWait, "input-wait", mcp.DefaultInputWait, "how long a 2026-07-28 call that asked its client for input (an InputRequiredResult) waits for the retry before it is cancelled; its requestState expires with it")
	fs.DurationVar(&c.ReloadEvery, "reload-every", 2*time.Second, "how often to pick up agents changed by other processes")
	fs.DurationVar(&c.AgentVisibility, "agent-visibility", 10*time.Second, "how long a message held by an agent worker whose stream stopped renewing it (its replica died) waits before it is delivered again")
	fs.DurationVar(&c.AgentHeartbeat, "agent-heartbeat", bus.DefaultHeartbeat, "how often agent worker presence is refreshed and waiting calls check it")
	fs.DurationVar(&c.AgentPresenceTTL, "agent-presence-ttl", bus.DefaultPresenceTTL, "how long a presence refresh stays valid: an agent worker's replica that dies is known gone within this plus 1.5 --agent-heartbeat")
	fs.StringVar(&c.SecretKey, "secret-key", "", "key that encrypts stored secrets (webhook signing secrets, the keys that sign access tokens and file URLs): 32 bytes as 64 hex digits or base64; replicas must share it (default: the key file secret.key under --data-dir, made on first start)")
	fs.StringVar(&c.PprofAddr, "pprof-addr", "", "serve Go's /debug/pprof profiles on this separate address (off when empty)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve /metrics, unauthenticated, on this separate address instead of the main one (where it needs an administrator's key unless --addr is loopback)")
	if err := parseFlags(fs, m.Env, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(m.Env.Stderr, "mcpgate serve: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	return c.validate(m.Env)
}

// validate refuses flag values the gateway cannot run with.
func (c *ServeConfig) validate(env *Env) error {
	var problem string
	switch {
	case c.ReloadEvery <= 0:
		problem = "--reload-every must be a positive duration such as 2s"
	case c.MaxBodyBytes <= 0:
		problem = "--max-body-bytes must be positive"
	case c.MaxUploadBytes <= 0:
		problem = "--max-upload-bytes must be positive"
	case c.FileRetention <= 0:
		problem = "--file-retention must be a positive duration such as 168h"
	case c.PageSize <= 0:
		problem = "--page-size must be positive"
	case c.AgentHeartbeat <= 0 || c.AgentPresenceTTL <= c.AgentHeartbeat:
		problem = "--agent-heartbeat must be positive and shorter than --agent-presence-ttl"
	case c.AgentVisibility <= 0:
		problem = "--agent-visibility must be a positive duration such as 10s"
	case c.LogFormat != "text" && c.LogFormat != "json":
		problem = "--log-format must be text or json"
	case !validLevel(c.LogLevel):
		problem = "--log-level must be debug, info, warn or error"
	case c.SlowCall <= 0:
		problem = "--slow-call must be a positive duration such as 5s"
	case c.InputWait <= 0:
		problem = "--input-wait must be a positive duration such as 5m"
	case c.drain.problem() != "":
		problem = c.drain.problem()
	case c.webhooks.problem() != "":
		problem = c.webhooks.problem()
	case secretKeyProblem(c.SecretKey) != "":
		problem = secretKeyProblem(c.SecretKey)
	default:
		problem = c.Governance.problem()
	}
	if problem != "" {
		fmt.Fprintln(env.Stderr, "mcpgate serve:", problem)
		return errUsage
	}
	return nil
}

// runServe runs the gateway until ctx ends.
func runServe(ctx context.Context, env *Env, args []string) error {
	m := NewMain(env)
	if err := m.ParseFlags(args); err != nil {
		return helpIsOK(err)
	}
	if err := m.Run(ctx); err != nil {
		m.Close()
		return err
	}
	hup, term := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(hup)
	defer signal.Stop(term)
	releaseStartupHeap() // after Notify: a signal meanwhile waits in its channel
	for {
		select {
		case <-term:
			m.logger.Info("draining")
			return errors.Join(m.Drain(context.Background()), m.Close())
		case <-ctx.Done():
			return m.stop(term)
		case <-m.done:
			return m.Close()
		case <-hup:
			m.ApplyConfig(ctx)
		}
	}
}

// stop ends the gateway once ctx is done: with a drain when the cause was
// SIGTERM (an orchestrator's stop, which may arrive a moment after the
// context saw it), at once otherwise (an interrupt: calls in flight are
// cancelled, and approvals and idempotency keys stay in the store).
func (m *Main) stop(term <-chan os.Signal) error {
	select {
	case <-term:
		m.logger.Info("draining")
		return errors.Join(m.Drain(context.Background()), m.Close())
	case <-time.After(100 * time.Millisecond):
		m.logger.Info("shutting down")
		return m.Close()
	}
}

// Run opens the store, applies the config, sets up the demo, and starts
// serving. It returns once the listener is open.
func (m *Main) Run(ctx context.Context) (err error) {
	m.logger, m.logOut = newLogger(m.Env, m.Config.LogLevel, m.Config.LogFormat, m.logDelay)
	stopGC := startGCTuner(m.Env)
	m.closers = append(m.closers, func() error { stopGC(); return nil })
	if m.unlock, err = m.lockDataDir(); err != nil {
		return err
	}
	if m.store, err = m.Config.store.openOrCreate(ctx, m.logger); err != nil {
		return err
	}
	if err := m.loadSecretKey(ctx); err != nil {
		return err
	}
	if err := m.sealKeys(ctx); err != nil {
		return err
	}
	if m.ln, err = net.Listen("tcp", m.Config.Addr); err != nil {
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	if m.Config.PublicURL == "" {
		m.Config.PublicURL = server.PublicURLFor(m.ln.Addr().String())
	}
	if m.oauth, err = m.newOAuth(ctx); err != nil {
		return err
	}
	if m.tracer, err = m.newTracer(ctx); err != nil {
		return err
	}
	if err := m.wire(); err != nil {
		return err
	}
	if err := m.prepare(ctx); err != nil {
		return err
	}
	m.start()
	if err := m.startMetrics(m.metricsHandler); err != nil {
		return err
	}
	return m.startPprof()
}

// wire builds the gateway's parts in the order they depend on each other,
// each one complete when built. What flows against that order (a session
// closed, skills loaded or stored, tool lists changed, notifications for
// sessions) goes through one event hub, subscribed to last.
func (m *Main) wire() error {
	hub, met, guard := events.New(), metrics.New(), netguard.New(nil)
	m.metricsHandler = met.Handler()
	m.registry = registry.New(m.store, &registry.Options{Logger: m.logger, OnChange: hub.ToolsChanged, OnLoad: hub.SkillsLoaded})
	b, err := m.openBus()
	if err != nil {
		return err
	}
	m.regSync = registrySync{reg: m.registry, bus: b, logger: m.logger}
	m.upstream = m.newUpstream(hub, guard)
	m.webhooks = m.newWebhooks(hub, guard, met, b)
	ttl, retention := m.governanceSettings()
	m.retention = retention
	opts := &pipeline.Options{Tables: m.registry, Backends: m.backends(b, guard), Recorder: met, BackendRecorder: met, Tracer: m.tracer, Logger: m.logger,
		Limiter: m.limiter(), DefaultRateLimit: m.Config.rateLimit.limit, LimitRecorder: met,
		IdempotencyTTL: ttl,
		Approvals:      m.store, Signals: b, ApprovalEvents: hub, Events: hub,
		Attachments: &files.Resolver{Files: m.store, Signer: m.fileSigner(), PublicURL: m.Config.PublicURL}}
	m.govern(opts, met)
	pipe := pipeline.New(opts)
	m.approvals = &approvalDecider{store: m.store, signals: b, events: hub, logger: m.logger}
	gw := gateway.New(&gateway.Options{Tables: m.registry, Pipeline: pipe, Upstreams: m.upstream, Files: m.fileResults()})
	m.tasks = m.newTasks(gw, hub)
	m.mcp = m.newMCP(gw, hub, m.requestStateSigner(), m.newPeers(b))
	m.subscribe(hub)
	srv, err := m.newServer(gw, b, met, hub)
	if err != nil {
		return err
	}
	m.http = m.newHTTP(srv)
	m.watchGauges(met)
	return nil
}

// newOAuth returns the OAuth authorization server. It fetches client
// metadata documents through the SSRF guard, which lets them come from
// private addresses only with --allow-private-networks.
func (m *Main) newOAuth(ctx context.Context) (*oauth.Server, error) {
	return oauth.New(ctx, &oauth.Options{
		Store: m.keys, PublicURL: m.Config.PublicURL, Logger: m.logger,
		HTTPClient: netguard.New(nil).Client(netguard.Policy{AllowPrivate: m.Config.AllowPrivate}),
	})
}

// mounts are the extra handlers: the demo API when --demo is on.
func (m *Main) mounts() map[string]http.Handler {
	if !m.Config.Demo {
		return nil
	}
	return map[string]http.Handler{demo.Prefix + "/": http.StripPrefix(demo.Prefix, demo.NewAPI(m.Config.store.dataDir))}
}

// prepare applies the config file and the demo, then loads the registry.
func (m *Main) prepare(ctx context.Context) error {
	if m.Config.ConfigPath != "" {
		if err := m.applyConfig(ctx); err != nil {
			return err
		}
	}
	if m.Config.Demo {
		d, err := demo.Setup(ctx, m.store, m.Config.PublicURL+demo.Prefix)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if err := m.prepareDemoAgent(ctx, d); err != nil {
			return err
		}
		printDemo(m.Env.Stdout, m.Config.PublicURL, d)
	}
	return m.registry.Reload(ctx)
}

// start serves in the background and keeps the registry fresh.
func (m *Main) start() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.workers.Go(func() { m.registry.Watch(ctx, m.Config.ReloadEvery) })
	signals := m.regSync.bus.Watch(ctx, registryTopic)
	m.workers.Go(func() { m.regSync.follow(ctx, signals) })
	m.workers.Go(func() { m.sweepSessions(ctx) })
	m.workers.Go(func() { m.sweepGovernance(ctx, m.retention) })
	m.workers.Go(func() { m.sweepApprovals(ctx) })
	whCtx, stop := context.WithCancel(context.Background())
	m.stopWebhooks = stop
	m.webhooks.run(whCtx, m)
	m.workers.Go(func() { m.fileSweeper().Run(ctx, fileSweepEvery) })
	m.workers.Go(func() { m.tasks.Run(ctx) })
	if m.demoWorker != nil {
		m.workers.Go(func() { m.runDemoWorker(ctx) })
	}
	go func() {
		defer close(m.done)
		if err := m.http.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.logger.Error("server stopped", "err", err)
		}
	}()
	m.logger.Info("mcpgate listening", "addr", m.ln.Addr().String(), "public_url", m.Config.PublicURL, "version", mcpgate.Version)
	_ = m.logOut.Flush() // scripts wait for the line
}

// Addr returns the address the gateway listens on.
func (m *Main) Addr() string { return m.ln.Addr().String() }

// URL returns the gateway's public base URL.
func (m *Main) URL() string { return m.Config.PublicURL }

// Close stops serving, ends open streams and closes the store.
func (m *Main) Close() error {
	if m.cancel != nil {
		m.cancel()
	}
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c())
	}
	if m.mcp != nil {
		m.mcp.Close() // cancels the calls in flight and ends every stream
	}
	if m.ui != nil {
		m.ui.Close() // ends the dashboard's live streams
	}
	if m.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errs = append(errs, m.http.Shutdown(ctx))
	}
	if m.audit != nil {
		errs = append(errs, m.audit.Close()) // after the calls in flight, before the store
	}
	if m.stopWebhooks != nil {
		m.stopWebhooks() // after the calls in flight: the outbox writes what they published
	}
	if m.ln != nil {
		// Shutdown closes the listener only when Serve ran; Run may have
		// failed after listening and before serving (a bad config file).
		if err := m.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	m.workers.Wait()
	if m.authn != nil {
		errs = append(errs, m.authn.Close()) // after the last request: its key's use is written
	}
	if m.shutdownTracer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		errs = append(errs, m.shutdownTracer(ctx)) // after the last span
	}
	if m.store != nil {
		errs = append(errs, m.store.Close())
		m.store = nil
	}
	if m.unlock != nil {
		errs = append(errs, m.unlock()) // after the store: the next process may open it
		m.unlock = nil
	}
	if m.logOut != nil {
		_ = m.logOut.Close() // last: every line logged while closing
	}
	return errors.Join(errs...)
}

// ApplyConfig re-applies the config file (on SIGHUP). A bad file is
// logged and the running configuration stays as it was.
func (m *Main) ApplyConfig(ctx context.Context) {
	if m.Config.ConfigPath == "" {
		m.logger.Warn("SIGHUP ignored: no --config file")
		return
	}
	if err := m.applyConfig(ctx); err != nil {
		m.logger.Error("config not applied; the running configuration is unchanged", "err", err)
		return
	}
	if err := m.registry.Reload(ctx); err != nil {
		m.logger.Error("registry reload", "err", err)
	}
}

// applyConfig loads, checks and applies the config file.
func (m *Main) applyConfig(ctx context.Context) error {
	c, err := config.Load(m.Config.ConfigPath, m.Env.LookupEnv)
	if err != nil {
		return err
	}
	changes, err := c.Apply(ctx, m.store)
	if err != nil {
		return err // it names the file, line and field
	}
	m.logger.Info("config applied", "file", m.Config.ConfigPath, "changes", changes.String())
	return nil
}

// sweepSessions deletes sessions idle for a day, and expired OAuth codes
// and refresh tokens, hourly.
func (m *Main) sweepSessions(ctx context.Context) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			m.sweep(ctx)
		}
	}
}

// sweep deletes expired OAuth codes and refresh tokens, then sessions
// idle for a day.
func (m *Main) sweep(ctx context.Context) {
	if n, err := m.store.DeleteExpiredOAuth(ctx, time.Now()); err != nil {
		m.logger.Warn("OAuth sweep", "err", err)
	} else if n > 0 {
		m.logger.Info("expired OAuth codes and refresh tokens removed", "count", n)
	}
	if n, err := m.store.DeleteSessions(ctx, time.Now().Add(-24*time.Hour)); err != nil {
		m.logger.Warn("session sweep", "err", err)
	} else if n > 0 {
		m.logger.Info("idle sessions removed", "count", n)
	}
	m.sweepRateBuckets(ctx)
}

// newLogger logs to stderr at the given level, as text lines (logtext's,
// slog's format) or JSON lines, through a logbuf.Writer: lines below warn
// (the access log's, one an MCP request) are written out together, delay
// later (logbuf's default when zero), with one system call.
func newLogger(env *Env, level, format string, delay time.Duration) (*slog.Logger, *logbuf.Writer) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	out := logbuf.New(env.Stderr, cmp.Or(delay, logbuf.DefaultDelay), logbuf.DefaultSize)
	opts := &slog.HandlerOptions{Level: l}
	h := logtext.New(out, opts)
	if format == "json" {
		h = slog.NewJSONHandler(out, opts)
	}
	return slog.New(out.Handler(h, slog.LevelWarn)), out
}

// validLevel reports whether level names a log level.
func validLevel(level string) bool {
	var l slog.Level
	return l.UnmarshalText([]byte(level)) == nil
}
