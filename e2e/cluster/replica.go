package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// StopTimeout bounds how long Term and Stop wait for a replica to exit; a
// drain takes up to --drain-delay plus --drain-timeout.
const StopTimeout = 90 * time.Second

// Replica is one `mcpgate serve` process of a Cluster. It keeps its port
// and data dir across restarts, so a restarted replica is the same replica.
type Replica struct {
	// Index is the replica's position in Cluster.Replicas.
	Index int
	// Addr is the replica's own host:port, and URL its base URL.
	Addr, URL string
	// DataDir is the replica's --data-dir.
	DataDir string
	// Stdout and Stderr collect the output of every run, restarts included.
	Stdout, Stderr *Buffer

	c       *Cluster
	ready   atomic.Bool // as the proxy last saw /readyz
	served  atomic.Int64
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current run exits
	starts  int
	waitErr error
}

// newReplica picks a free port and a data dir for replica i.
func (c *Cluster) newReplica(tb testing.TB, i int) (*Replica, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	return &Replica{Index: i, Addr: addr, URL: "http://" + addr, DataDir: tb.TempDir(),
		Stdout: &Buffer{}, Stderr: &Buffer{}, c: c}, nil
}

// FreeAddr returns a loopback address whose port was free a moment ago,
// for the replicas and for the programs a test runs beside them. It never
// returns an address twice in a process: the kernel may hand a port that
// was just closed out again, and a replica that binds its port only when
// it starts would then find it taken by a program started before it.
func FreeAddr() (string, error) {
	for {
		addr, err := listenedAddr()
		if err != nil {
			return "", err
		}
		if _, taken := handedAddrs.LoadOrStore(addr, true); !taken {
			return addr, nil
		}
	}
}

// handedAddrs holds every address FreeAddr has returned.
var handedAddrs sync.Map

// listenedAddr returns the address of a loopback listener it closes.
func listenedAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Start starts the replica (again, after Kill, Term or Stop) and waits
// until its /readyz answers 200. It fails if the replica is running.
func (r *Replica) Start() error {
	if err := r.spawn(); err != nil {
		return err
	}
	return r.WaitReady(r.c.startTimeout())
}

// spawn starts the process without waiting for readiness.
func (r *Replica) spawn() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil && !isDone(r.exited) {
		return fmt.Errorf("replica %d is already running", r.Index)
	}
	r.starts++
	fmt.Fprintf(r.Stderr, "--- cluster: start %d of replica %d on %s ---\n", r.starts, r.Index, r.Addr)
	cmd := exec.Command(r.c.opts.Binary, r.args()...)
	cmd.Env = append(r.c.env(), "MCPGATE_ADDR="+r.Addr, "MCPGATE_DATA_DIR="+r.DataDir)
	cmd.Stdout, cmd.Stderr = r.Stdout, r.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start replica %d: %w", r.Index, err)
	}
	exited := make(chan struct{})
	r.cmd, r.exited = cmd, exited
	go func() { err := cmd.Wait(); r.mu.Lock(); r.waitErr = err; r.mu.Unlock(); close(exited) }()
	return nil
}

// args are the replica's serve flags.
func (r *Replica) args() []string {
	level := r.c.opts.LogLevel
	if level == "" {
		level = "info"
	}
	args := append([]string{"serve", "--log-level", level}, r.c.opts.Args...)
	if f := r.c.opts.ReplicaArgs; f != nil {
		args = append(args, f(r.Index)...)
	}
	return args
}

// startTimeout is Options.StartTimeout or its default.
func (c *Cluster) startTimeout() time.Duration {
	if c.opts.StartTimeout > 0 {
		return c.opts.StartTimeout
	}
	return 2 * time.Minute
}

// WaitReady waits until the replica's /readyz answers 200, failing when the
// process exits first or timeout passes.
func (r *Replica) WaitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	exited := r.exitedChan()
	for {
		if r.probe(ctx) {
			r.ready.Store(true)
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("replica %d exited before it was ready: %v\n%s", r.Index, r.ExitErr(), r.Stderr.String())
		case <-ctx.Done():
			return fmt.Errorf("replica %d not ready within %s:\n%s", r.Index, timeout, r.Stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe reports whether /readyz answers 200 now.
func (r *Replica) probe(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.URL+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Kill ends the replica with SIGKILL, as a crash or the OOM killer would,
// and waits for the process to be gone.
func (r *Replica) Kill() error { return r.signal(syscall.SIGKILL, StopTimeout) }

// Term sends SIGTERM, which drains the replica, and waits until it exits.
func (r *Replica) Term() error { return r.signal(syscall.SIGTERM, StopTimeout) }

// Stop interrupts the replica (SIGINT: no drain) and waits until it exits,
// killing it after StopTimeout. A stopped replica is no error.
func (r *Replica) Stop() error {
	err := r.signal(os.Interrupt, StopTimeout)
	if errors.Is(err, errStillRunning) {
		_ = r.signal(syscall.SIGKILL, StopTimeout)
		return fmt.Errorf("replica %d did not stop on SIGINT within %s", r.Index, StopTimeout)
	}
	return nil
}

// errStillRunning is a signal's wait that timed out.
var errStillRunning = errors.New("still running")

// signal sends sig to the running process and waits up to timeout for it
// to exit; a replica not running is left alone.
func (r *Replica) signal(sig os.Signal, timeout time.Duration) error {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	if cmd == nil || isDone(exited) {
		return nil
	}
	r.ready.Store(false)
	if sig == syscall.SIGKILL {
		fmt.Fprintf(r.Stderr, "--- cluster: SIGKILL ---\n")
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("replica %d after %v: %w", r.Index, sig, errStillRunning)
	}
}

// Running reports whether the replica's process is running.
func (r *Replica) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmd != nil && !isDone(r.exited)
}

// Pid returns the process id of the current run, 0 when never started.
func (r *Replica) Pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// ExitErr returns how the last run ended (nil for exit status 0 or while
// it runs).
func (r *Replica) ExitErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waitErr
}

// Exited returns a channel closed when the current run exits.
func (r *Replica) Exited() <-chan struct{} { return r.exitedChan() }

// exitedChan is the current run's exit channel.
func (r *Replica) exitedChan() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exited
}

// Served returns how many requests the proxy sent to this replica.
func (r *Replica) Served() int64 { return r.served.Load() }

// Ready reports whether the proxy currently sends requests to the replica.
func (r *Replica) Ready() bool { return r.ready.Load() }

// isDone reports whether ch is closed.
func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
