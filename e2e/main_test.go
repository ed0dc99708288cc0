// Package e2e tests the real mcpgate binary from the outside, as users and
// MCP hosts meet it: the official MCP TypeScript SDK client (pinned in this
// directory's package.json) against `mcpgate serve`, the admin CLI, the
// config file and its reload on SIGHUP.
//
// TestMain builds the binary once and installs the pinned Node packages
// when they are missing, so `go test ./...` works from a fresh clone on a
// machine with Go, Node.js and npm.
//
// The package's tests run one after another, except those that spend most
// of their time waiting on child processes and timers (the conformance
// suites, dead workers, a stale claim, both engines' governance runs, a
// 30 MiB result, agent round trips, webhooks, the PostgreSQL runs, the
// TypeScript SDK's flows, the approval and task tests): those call
// t.Parallel, and TestMain lets six of them run at once unless -parallel
// is given, so that the package stays well inside go test's default
// 10-minute limit, also while `go test ./...` runs other packages beside
// it. Go runs the parallel tests after the serial ones, so a long test
// left serial adds its whole time to the package's. Each test starts its
// own gateway on its own port, data dir and database; the dashboard's
// Chromium tests stay serial.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/cluster"
)

// binary is the mcpgate binary built by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, &binary, cluster.MainOptions{Name: "e2e", NodeDir: ".", Parallel: 6}))
}

// gateway is a running mcpgate serve process.
type gateway struct {
	t      *testing.T
	cmd    *exec.Cmd
	URL    string // base URL
	stdout *lockedBuffer
	stderr logText
	done   chan struct{}
}

// logText is a process's log as the test reads it.
type logText interface{ String() string }

// fileLog is a log written by the process straight to a file.
type fileLog string

// String returns what the file holds so far.
func (f fileLog) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

// lockedBuffer is a buffer written by a process and read by the test.
type lockedBuffer = cluster.Buffer

// listening finds the address in the log line, text or JSON.
var listening = regexp.MustCompile(`mcpgate listening"(?: addr=|,"addr":")([^\s"]+)`)

// startGateway runs `mcpgate serve` with args on a free port and waits
// until it listens. The process is stopped at the end of the test.
func startGateway(t *testing.T, env []string, args ...string) *gateway {
	return startGatewayLog(t, env, "", args...)
}

// startGatewayLog is startGateway with the gateway's stderr written by the
// process straight to the file logPath when it is not empty, instead of
// through the test: load tests use it, so that the test process, which
// shares the machine's cores with the gateway, reads no log line a call.
func startGatewayLog(t *testing.T, env []string, logPath string, args ...string) *gateway {
	t.Helper()
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "debug"}, args...)
	g := &gateway{t: t, stdout: &lockedBuffer{}, done: make(chan struct{})}
	g.cmd = exec.Command(binary, all...)
	g.cmd.Env = append(os.Environ(), env...)
	g.cmd.Stdout = g.stdout
	addr := make(chan string, 1)
	if logPath == "" {
		g.stderr = g.pipeStderr(addr)
	} else {
		g.stderr = g.fileStderr(logPath, addr)
	}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); close(g.done) }()
	t.Cleanup(g.stop)
	select {
	case a := <-addr:
		g.URL = "http://" + a
	case <-g.done:
		t.Fatalf("mcpgate exited before listening:\n%s", g.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("mcpgate did not start:\n%s", g.stderr.String())
	}
	return g
}

// pipeStderr keeps the gateway's stderr in a buffer and sends the
// listening address on addr once it is logged.
func (g *gateway) pipeStderr(addr chan<- string) logText {
	buf := &lockedBuffer{}
	pr, pw := io.Pipe()
	g.cmd.Stderr = io.MultiWriter(buf, pw)
	go func() { <-g.done; pw.Close() }()
	go scanFor(pr, addr)
	return buf
}

// fileStderr gives the gateway the file at path as its stderr and sends
// the listening address on addr once the file holds it.
func (g *gateway) fileStderr(path string, addr chan<- string) logText {
	f, err := os.Create(path)
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { f.Close() })
	g.cmd.Stderr = f
	log := fileLog(path)
	go func() {
		for {
			if m := listening.FindStringSubmatch(log.String()); m != nil {
				addr <- m[1]
				return
			}
			select {
			case <-g.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return log
}

// scanFor sends the listening address, then drains the rest.
func scanFor(r io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			addr <- m[1]
		}
	}
}

// stop ends the process with an interrupt (no drain) and waits for it.
func (g *gateway) stop() {
	if g.cmd.ProcessState != nil {
		return
	}
	g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.done:
	case <-time.After(15 * time.Second):
		g.cmd.Process.Kill()
		<-g.done
		g.t.Errorf("mcpgate did not stop on SIGINT within 15s")
	}
	if g.t.Failed() {
		g.t.Logf("mcpgate stderr:\n%s", g.stderr.String())
	}
}

// runCLI runs an mcpgate admin command and returns its stdout.
func runCLI(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, errOut, err := tryCLI(env, args...)
	if err != nil {
		t.Fatalf("mcpgate %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// tryCLI runs an mcpgate command and returns stdout, stderr and the error.
func tryCLI(env []string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
