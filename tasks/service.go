package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Defaults for Options fields left zero.
const (
	DefaultTTL          = 24 * time.Hour
	MaxTTL              = 7 * 24 * time.Hour
	DefaultHeartbeat    = 5 * time.Second
	DefaultLease        = 30 * time.Second
	DefaultPollInterval = time.Second
)

// Caller runs one tools/call through the gateway's pipeline.
type Caller interface {
	Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)
}

// Publisher publishes events for webhooks (events.Hub).
type Publisher interface {
	Publish(ctx context.Context, e *mcpgate.Event)
}

// Agents finds the agent a task ran on, for the owner its events name.
type Agents interface {
	FindAgent(ctx context.Context, id string) (*mcpgate.Agent, error)
}

// Options configure a Service. Store and Calls are required.
type Options struct {
	Store mcpgate.TaskStore
	Calls Caller
	// Events is told of every task that ends; optional.
	Events Publisher
	// Agents names the owner of tasks failed by the recovery; optional.
	Agents Agents
	// OnStatus is called with every task whose status this process
	// changed (the MCP transport tells the session that made it);
	// optional. It must not block.
	OnStatus func(t *mcpgate.Task)
	// Shared says that other processes run tasks on the same store
	// (replicas on PostgreSQL): Recover then fails only the tasks whose
	// runner's heartbeat is older than Lease. Otherwise every unfinished
	// task of another runner belongs to a process that is gone.
	Shared bool
	// Heartbeat is how often the runner's tasks are marked alive (default
	// 5s) and Lease how long a heartbeat counts (default 30s).
	Heartbeat, Lease time.Duration
	// PollInterval is the polling interval tasks advise (default 1s).
	PollInterval time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

// Service starts, tracks and cancels tasks. It is safe for concurrent use.
type Service struct {
	opts   Options
	runner string
	base   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]*run
	closed  bool // Close began: no task starts any more
}

// run is one task running in this process.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a Service. It panics without Store or Calls, which is a
// wiring mistake.
func New(opts *Options) *Service {
	if opts == nil || opts.Store == nil || opts.Calls == nil {
		panic("tasks.New: Options.Store and Options.Calls are required")
	}
	s := &Service{opts: *opts, runner: "run_" + randomHex(8), running: make(map[string]*run)}
	s.setDefaults()
	s.base, s.stop = context.WithCancel(context.Background())
	return s
}

func (s *Service) setDefaults() {
	o := &s.opts
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// PollInterval is how often a caller should poll a task.
func (s *Service) PollInterval() time.Duration { return s.opts.PollInterval }

// Close cancels every task this process runs, which end failed (the
// gateway shut down while they ran), and waits for them to be recorded.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
	return nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}
