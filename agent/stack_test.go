package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/agent"
	"github.com/mcpgate/mcpgate/api"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/server"
	"github.com/mcpgate/mcpgate/skilledit"
	"github.com/mcpgate/mcpgate/sqlite"
)

// The bus and every store serve the backend.
var (
	_ agent.Bus      = (*bus.Bus)(nil)
	_ agent.Channels = mcpgate.Store(nil)
)

// envPostgres names a PostgreSQL server the tests may create databases on.
const envPostgres = pgtest.EnvDSN

// stack is the gateway's message service over a real store: the agent
// backend, the bus and the server with the agent worker routes on
// 127.0.0.1.
type stack struct {
	store   mcpgate.Store
	bus     *bus.Bus
	backend *agent.Backend
	url     string
	key     string // the agent key of agent csv
	agent   *mcpgate.Agent
	skill   *mcpgate.Skill
	cred    *mcpgate.Credential
}

// engines are the stores the integration tests and benchmarks run on;
// openEngine skips PostgreSQL when envPostgres is not set.
var engines = []string{"sqlite", "postgres"}

// openEngine opens a new, empty store of the named engine, with the
// broker a deployment on it uses (none for SQLite, LISTEN/NOTIFY on
// PostgreSQL).
func openEngine(tb testing.TB, engine string) (mcpgate.Store, bus.Broker) {
	tb.Helper()
	if engine == "sqlite" {
		return openSQLite(tb), nil
	}
	if os.Getenv(envPostgres) == "" {
		tb.Skip(envPostgres + " is not set; scripts/start-postgres.sh starts a server")
	}
	return openPostgres(tb)
}

// openSQLite opens a store in a new file.
func openSQLite(tb testing.TB) mcpgate.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// openPostgres opens a store and a broker in a new database, dropped at
// the end.
func openPostgres(tb testing.TB) (mcpgate.Store, bus.Broker) {
	tb.Helper()
	st, dsn := openPostgresDSN(tb)
	return st, openBroker(tb, dsn)
}

// openPostgresDSN opens a store in a new database, dropped at the end, and
// returns it with the database's DSN.
func openPostgresDSN(tb testing.TB) (mcpgate.Store, string) {
	tb.Helper()
	dsn := pgtest.Database(tb, pgtest.Admin(tb))
	st, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st, dsn
}

// openBroker opens a LISTEN/NOTIFY broker, as each replica has one.
func openBroker(tb testing.TB, dsn string) bus.Broker {
	tb.Helper()
	broker, err := postgres.OpenBroker(context.Background(), dsn, &postgres.BrokerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { broker.Close() })
	return broker
}

// mustStack builds the stack on st with a visibility timeout: user alice
// owns agent csv, whose agent skill "ask" has its chat tool and a declared
// tool "lookup".
func mustStack(tb testing.TB, st mcpgate.Store, broker bus.Broker, visibility time.Duration) *stack {
	tb.Helper()
	ctx := context.Background()
	s := &stack{store: st}
	u := &mcpgate.User{Name: "alice", Source: mcpgate.SourceCLI}
	must(tb, st.CreateUser(ctx, u))
	s.agent = &mcpgate.Agent{ID: "csv", Name: "CSV analyst", OwnerID: u.ID, MCPEnabled: true, Source: mcpgate.SourceCLI}
	must(tb, st.CreateAgent(ctx, s.agent))
	s.skill = &mcpgate.Skill{AgentID: "csv", Name: "ask", Kind: mcpgate.SkillAgent, AutoApprove: true, Source: mcpgate.SourceCLI}
	s.skill.Tools = []*mcpgate.Tool{
		mcpgate.ChatTool(s.agent, s.skill),
		{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object","properties":{"row":{"type":"integer"}}}`)},
	}
	must(tb, st.PutSkill(ctx, s.skill))
	k, secret := auth.NewKey(mcpgate.KeyAgent, u.ID, "csv", "worker")
	must(tb, st.CreateKey(ctx, k))
	s.key = secret
	s.cred = &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "key_alice", UserID: u.ID}
	s.bus, s.url = serveReplica(tb, st, broker, visibility)
	s.backend = agent.New(&agent.Options{Bus: s.bus, Channels: st})
	return s
}

// serveReplica starts one replica of the gateway's message service on st:
// a bus with its broker and the server on 127.0.0.1. It returns the bus and
// the server's URL.
func serveReplica(tb testing.TB, st mcpgate.Store, broker bus.Broker, visibility time.Duration) (*bus.Bus, string) {
	tb.Helper()
	b := bus.New(&bus.Options{Store: st, Broker: broker, Logger: slog.New(slog.DiscardHandler)})
	tb.Cleanup(func() { b.Close() })
	reg := registry.New(st, nil)
	must(tb, reg.Reload(context.Background()))
	authn := auth.NewAuthenticator(st, nil)
	srv, err := server.New(&server.Options{
		Store: st, Tables: reg, Auth: authn, Metrics: metrics.New(), PublicURL: "http://127.0.0.1:1",
		API: api.New(&api.Options{Store: st, Skills: skilledit.Editor{Store: st}, Auth: authn, Bus: b, Visibility: visibility}),
	})
	must(tb, err)
	hs := httptest.NewServer(srv)
	tb.Cleanup(hs.Close)
	return b, hs.URL
}

// must fails the test on an error.
func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// call returns a call of the skill's tool (0 chat, 1 lookup) in a session.
func (s *stack) call(tool int, args, session string) *mcpgate.Call {
	t := s.skill.Tools[tool]
	return &mcpgate.Call{
		Agent: s.agent, Skill: s.skill, Tool: t, ToolName: t.Name, Arguments: json.RawMessage(args),
		Caller: s.cred.Caller(), SessionID: session, Notifier: mcpgate.NopNotifier{},
	}
}

// worker is an agent worker speaking the wire protocol over HTTP, as an
// agent process would.
type worker struct {
	url, key string
	handle   func(ctx context.Context, w *worker, m *mcpgate.Message)
}

// start connects the worker's inbox stream and serves it in a goroutine
// until ctx ends; it returns once the stream is open, so the agent is
// online.
func (w *worker) start(tb testing.TB, ctx context.Context) {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", w.url+"/api/v1/agent/inbox", nil)
	must(tb, err)
	req.Header.Set("Authorization", "Bearer "+w.key)
	resp, err := http.DefaultClient.Do(req)
	must(tb, err)
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		tb.Fatalf("inbox: HTTP %d", resp.StatusCode)
	}
	done := make(chan struct{})
	tb.Cleanup(func() { resp.Body.Close(); <-done })
	go func() {
		defer close(done)
		w.serve(ctx, resp)
	}()
}

// serve reads the stream's events and hands each message to the handler in
// its own goroutine.
func (w *worker) serve(ctx context.Context, resp *http.Response) {
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m mcpgate.Message
		if json.Unmarshal([]byte(data), &m) == nil {
			go w.handle(ctx, w, &m)
		}
	}
}

// post posts a reply, delta or error to the message m.
func (w *worker) post(ctx context.Context, m *mcpgate.Message, typ mcpgate.MessageType, body mcpgate.MessageBody) error {
	b, _ := json.Marshal(map[string]any{"type": typ, "in_reply_to": m.ID, "body": body})
	_, err := w.do(ctx, "POST", "/api/v1/channels/"+m.ChannelID+"/messages", b, http.StatusCreated)
	return err
}

// history returns the messages of m's channel.
func (w *worker) history(ctx context.Context, m *mcpgate.Message) ([]*mcpgate.Message, error) {
	b, err := w.do(ctx, "GET", "/api/v1/channels/"+m.ChannelID+"/messages?limit=1000", nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var page struct{ Messages []*mcpgate.Message }
	return page.Messages, json.Unmarshal(b, &page)
}

// do sends a request with the agent key and returns the body of a reply
// with the wanted status.
func (w *worker) do(ctx context.Context, method, path string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, w.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Agent-API-Key", w.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	if _, err := out.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, out.String())
	}
	return out.Bytes(), nil
}
