package chaos

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadRun is a running `mcpgate load`.
type loadRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	events         string // the --events file
	done           chan error
}

// startLoad starts `mcpgate load` on url with keys, retries and session
// following, for d.
func startLoad(t *testing.T, url, key string, sessions int, d time.Duration) *loadRun {
	t.Helper()
	l := &loadRun{events: filepath.Join(t.TempDir(), "events.jsonl"), done: make(chan error, 1)}
	l.cmd = exec.Command(binary, "load", "--url", url, "--key", key, "--tool", "record", "--args", `{"note":"chaos"}`,
		"--sessions", strconv.Itoa(sessions), "--duration", d.String(),
		"--keys", "--retries", "30", "--retry-backoff", "100ms", "--follow", "--events", l.events)
	l.cmd.Stdout, l.cmd.Stderr = &l.stdout, &l.stderr
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.done <- l.cmd.Wait() }()
	t.Cleanup(func() {
		if l.cmd.ProcessState == nil {
			_ = l.cmd.Process.Kill()
			<-l.done
		}
	})
	return l
}

// loadReport is what `mcpgate load` reported.
type loadReport struct {
	output  string
	summary map[string]float64 // the summary line's fields
	events  []loadEvent
}

// loadEvent is one line of `load --events`.
type loadEvent struct {
	At         time.Time `json:"at"`
	Event      string    `json:"event"`
	Session    int       `json:"session"`
	Key        string    `json:"key"`
	Attempt    int       `json:"attempt"`
	Class      string    `json:"class"`
	Error      string    `json:"error"`
	FirstError time.Time `json:"first_error"`
}

// summaryField matches one name=value of the summary line.
var summaryField = regexp.MustCompile(`(\w+)=([0-9.]+)`)

// wait waits for the load to end, within timeout, and reads its report.
func (l *loadRun) wait(t *testing.T, timeout time.Duration) *loadReport {
	t.Helper()
	select {
	case err := <-l.done:
		if err != nil {
			t.Errorf("mcpgate load: %v\n%s\n%s", err, l.stdout.String(), l.stderr.String())
		}
	case <-time.After(timeout):
		t.Fatalf("mcpgate load still running %s after its end", timeout)
	}
	r := &loadReport{output: l.stdout.String(), summary: map[string]float64{}}
	i := strings.Index(r.output, "summary: ")
	if i < 0 {
		t.Fatalf("no summary line in:\n%s\n%s", r.output, l.stderr.String())
	}
	line, _, _ := strings.Cut(r.output[i:], "\n")
	for _, m := range summaryField.FindAllStringSubmatch(line, -1) {
		r.summary[m[1]], _ = strconv.ParseFloat(m[2], 64)
	}
	r.events = mustReadEvents(t, l.events)
	return r
}

// mustReadEvents reads a --events file.
func mustReadEvents(t *testing.T, path string) []loadEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var events []loadEvent
	for line := range bytes.Lines(b) {
		var e loadEvent
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		events = append(events, e)
	}
	return events
}

// field returns a summary field, failing the test when it is missing.
func (r *loadReport) field(t *testing.T, name string) int {
	t.Helper()
	v, ok := r.summary[name]
	if !ok {
		t.Fatalf("summary lacks %s:\n%s", name, r.output)
	}
	return int(v)
}

// String is the report's output, for failure messages.
func (r *loadReport) String() string { return r.output }
