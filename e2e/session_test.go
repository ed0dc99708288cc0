package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"
)

// sessionPlan tells session.mjs which server to hold a session with and
// which tool to call after the first change.
type sessionPlan struct {
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers,omitempty"`
	Call      clientCall        `json:"call"`
	TimeoutMs int               `json:"timeoutMs"`
}

// sessionReport is what session.mjs prints last.
type sessionReport struct {
	Before []string `json:"before"`
	Added  []string `json:"added"`
	Call   struct {
		Result *toolResult  `json:"result"`
		Error  *clientError `json:"error"`
	} `json:"call"`
	Deleted       []string     `json:"deleted"`
	Notifications int          `json:"notifications"`
	Error         *clientError `json:"error"`
}

// sessionProc is a running session.mjs whose stdout lines the test reads
// one by one, to change the agent between the session's steps.
type sessionProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string
	stderr *lockedBuffer
}

// startSession starts session.mjs with plan. The process is killed at the
// end of the test if it is still running.
func startSession(t *testing.T, plan sessionPlan) *sessionProc {
	t.Helper()
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	p := &sessionProc{t: t, lines: make(chan string, 8), stderr: &lockedBuffer{}}
	p.cmd = exec.CommandContext(ctx, "node", "session.mjs", string(b))
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.scan(bufio.NewScanner(stdout))
	t.Cleanup(func() { cancel(); p.cmd.Wait() })
	return p
}

// scan sends each stdout line, then closes lines at the end of output.
func (p *sessionProc) scan(sc *bufio.Scanner) {
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		p.lines <- sc.Text()
	}
	close(p.lines)
}

// next returns the next stdout line, failing when the output ends or
// nothing comes within a generous bound.
func (p *sessionProc) next() string {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("session.mjs ended early; stderr:\n%s", p.stderr.String())
		}
		return line
	case <-time.After(30 * time.Second):
		p.t.Fatalf("session.mjs printed nothing within 30s; stderr:\n%s", p.stderr.String())
	}
	return ""
}

// expect reads the next line and fails unless it is want; a report line
// in its place says which stage failed.
func (p *sessionProc) expect(want string) {
	p.t.Helper()
	if line := p.next(); line != want {
		p.t.Fatalf("session.mjs printed %s, want %q; stderr:\n%s", line, want, p.stderr.String())
	}
}

// report reads the final report and waits for the process to exit.
func (p *sessionProc) report() *sessionReport {
	p.t.Helper()
	line := p.next()
	var rep sessionReport
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		p.t.Fatalf("session.mjs report %q: %v; stderr:\n%s", line, err, p.stderr.String())
	}
	for extra := range p.lines { // read to the end before Wait
		p.t.Errorf("session.mjs printed after its report: %s", extra)
	}
	if err := p.cmd.Wait(); err != nil || rep.Error != nil {
		p.t.Fatalf("session.mjs failed (%v) at %+v; stderr:\n%s", err, rep.Error, p.stderr.String())
	}
	return &rep
}
