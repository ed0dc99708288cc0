package chaos

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/e2e/cluster"
)

// checkFailures checks the load's own account: no call failed for good,
// no session was lost, and every failed attempt belongs to a call whose
// first failure came while the killed replica died (it was in flight
// there) and which then succeeded with its key.
func checkFailures(t *testing.T, rep *loadReport, tl *timeline) {
	t.Helper()
	for _, name := range []string{"failed", "lost_sessions", "errors_session", "errors_tool"} {
		if n := rep.field(t, name); n != 0 {
			t.Errorf("%s=%d, want 0\n%s", name, n, rep)
		}
	}
	retried := map[string]bool{}
	for _, e := range rep.events {
		if e.Event == "retried" {
			retried[e.Key] = true
		}
	}
	for _, e := range rep.events {
		switch {
		case e.Event == "error" && e.Attempt == 1 && !inKillWindow(e.At, tl):
			t.Errorf("call %s failed at %s, outside the kill window %s to %s: %s", e.Key,
				since(tl, e.At), since(tl, tl.kill), since(tl, tl.killed.Add(killSlack)), e.Error)
		case e.Event == "error" && !retried[e.Key]:
			t.Errorf("call %s failed (%s) and was not retried to success", e.Key, e.Error)
		case e.Event == "failed" || e.Event == "lost_session":
			t.Errorf("load event %+v", e)
		}
	}
}

// inKillWindow reports whether at is between the SIGKILL and killSlack
// after the process was gone.
func inKillWindow(at time.Time, tl *timeline) bool {
	return !at.Before(tl.kill) && !at.After(tl.killed.Add(killSlack))
}

// checkDeliveries checks the backend's account: every delivery carried a
// key, every successful call's key reached it, and a key came twice only
// when its first delivery was made before the kill and its call then
// failed at the client: the killed replica had sent it, its claim went
// stale, and the retry ran the call again. The backend, honouring the key,
// executed each key once.
func checkDeliveries(t *testing.T, rep *loadReport, got counts, tl *timeline) {
	t.Helper()
	if got.unkeyed != 0 {
		t.Errorf("%d deliveries reached the backend without an idempotency key", got.unkeyed)
	}
	if ok := rep.field(t, "calls"); got.keys != ok {
		t.Errorf("the backend executed %d keys, the load counted %d successful calls", got.keys, ok)
	}
	failed := map[string]bool{}
	for _, e := range rep.events {
		failed[e.Key] = failed[e.Key] || e.Event == "error"
	}
	for key, at := range got.deliveries {
		switch {
		case len(at) == 1:
		case len(at) > 2 || !failed[key] || at[0].After(tl.killed) || at[1].Before(tl.kill):
			t.Errorf("key %s delivered %d times, at %s: a duplicate the kill does not explain", key, len(at), sinceAll(tl, at))
		}
	}
}

// redelivered counts the keys the backend got more than once.
func redelivered(got counts) int {
	n := 0
	for _, at := range got.deliveries {
		if len(at) > 1 {
			n++
		}
	}
	return n
}

// logReport logs the run's numbers, and writes them to
// MCPGATE_CHAOS_REPORT when that names a file.
func logReport(t *testing.T, c *cluster.Cluster, rep *loadReport, got counts, tl *timeline) {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos run: %d sessions; SIGKILL replica 1 at %s, gone at %s; SIGTERM replica 2 at %s, drained at %s; both started at %s, ready at %s\n",
		sessionsOf(rep), since(tl, tl.kill), since(tl, tl.killed), since(tl, tl.term), since(tl, tl.termed), since(tl, tl.restart), since(tl, tl.restarted))
	b.WriteString(rep.output)
	last := lastRecovery(rep, tl)
	fmt.Fprintf(&b, "calls cut by the kill: %d, the last of them succeeded %s after the SIGKILL (claims stale after %s)\n",
		killedCalls(rep, tl), last.Round(time.Millisecond), claimLife)
	fmt.Fprintf(&b, "backend: %d keys executed once each, %d delivered twice, %d deliveries without a key\n", got.keys, redelivered(got), got.unkeyed)
	for _, r := range c.Replicas {
		fmt.Fprintf(&b, "replica %d served %d requests, %d of them after both restarts were ready\n", r.Index, r.Served(), r.Served()-tl.served[r.Index])
	}
	writeThroughput(&b, got, tl)
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "load average: %s", la)
	}
	t.Log("\n" + b.String())
	if path := os.Getenv("MCPGATE_CHAOS_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// sessionsOf reads the session count from the load's first line.
func sessionsOf(rep *loadReport) int {
	var tool string
	var n int
	fmt.Sscanf(rep.output, "tool %s %d sessions", &tool, &n)
	return n
}

// killedCalls counts the calls whose first failure was in the kill window.
func killedCalls(rep *loadReport, tl *timeline) int {
	n := 0
	for _, e := range rep.events {
		if e.Event == "error" && e.Attempt == 1 && inKillWindow(e.At, tl) {
			n++
		}
	}
	return n
}

// lastRecovery is how long after the SIGKILL the last call cut by it
// succeeded.
func lastRecovery(rep *loadReport, tl *timeline) time.Duration {
	var last time.Duration
	for _, e := range rep.events {
		if e.Event == "retried" && inKillWindow(e.FirstError, tl) {
			last = max(last, e.At.Sub(tl.kill))
		}
	}
	return last
}

// since formats at as seconds into the run.
func since(tl *timeline, at time.Time) string {
	return at.Sub(tl.start).Round(time.Millisecond).String()
}

// sinceAll formats times as seconds into the run.
func sinceAll(tl *timeline, at []time.Time) string {
	s := make([]string, len(at))
	for i, a := range at {
		s[i] = since(tl, a)
	}
	return strings.Join(s, ", ")
}

// writeThroughput writes the calls per second the backend executed in
// each stretch of the run, counting each key at its first delivery.
func writeThroughput(b *strings.Builder, got counts, tl *timeline) {
	stretches := []struct {
		what     string
		from, to time.Time
	}{
		{"3 replicas", tl.start, tl.kill},
		{"replica 1 killed", tl.kill, tl.term},
		{"replica 2 draining", tl.term, tl.termed},
		{"1 replica", tl.termed, tl.restart},
		{"2 replicas starting", tl.restart, tl.restarted},
		{"3 replicas again", tl.restarted, tl.end},
	}
	b.WriteString("backend executions per second:")
	for _, s := range stretches {
		n := 0
		for _, at := range got.deliveries {
			if !at[0].Before(s.from) && at[0].Before(s.to) {
				n++
			}
		}
		if d := s.to.Sub(s.from).Seconds(); d > 0 {
			fmt.Fprintf(b, " %s %.0f;", s.what, float64(n)/d)
		}
	}
	b.WriteString("\n")
}
