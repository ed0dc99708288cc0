package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopSignals checks how the binary stops: SIGTERM drains (the log
// says so and the process exits by itself), an interrupt closes at once.
func TestStopSignals(t *testing.T) {
	for _, tt := range []struct {
		name string
		sig  syscall.Signal
		log  string
	}{
		{"SIGTERM drains", syscall.SIGTERM, `msg=draining`},
		{"interrupt closes", syscall.SIGINT, `msg="shutting down"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			g := startGateway(t, nil, "--data-dir", filepath.Join(dir, "data"), "--drain-timeout", "5s")
			resp, err := http.Get(g.URL + "/readyz")
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("readyz before the signal: %v %v", resp, err)
			}
			resp.Body.Close()
			g.cmd.Process.Signal(tt.sig)
			select {
			case <-g.done:
			case <-time.After(20 * time.Second):
				g.cmd.Process.Kill()
				<-g.done
				t.Fatalf("%s: the process did not exit", tt.name)
			}
			if !strings.Contains(g.stderr.String(), tt.log) {
				t.Errorf("%s: the log lacks %s:\n%s", tt.name, tt.log, g.stderr.String())
			}
			if code := g.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s: exit code %d", tt.name, code)
			}
		})
	}
}
