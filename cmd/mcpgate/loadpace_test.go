package main

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestPacerSchedule: the sessions' schedules are staggered over one
// interval, and a call that comes due while the one before it still runs
// counts from when it was due, not from when it could be sent.
func TestPacerSchedule(t *testing.T) {
	start := time.Now().Add(-time.Hour) // every call is overdue
	p := newPacer(start, 100, 1, 4)     // 4 sessions sharing 100 calls/s: one every 40 ms each
	for k := range 3 {
		got, ok := p.wait(context.Background())
		if want := start.Add(10*time.Millisecond + time.Duration(k)*40*time.Millisecond); !ok || !got.Equal(want) {
			t.Fatalf("call %d counts from %v, want %v (when it was due)", k, got, want)
		}
	}
	if newPacer(start, 0, 0, 1) != nil {
		t.Error("rate 0 made a pacer; want a closed loop")
	}
}

// TestPacerWaitsForTheDueTime: a call not yet due waits for it and counts
// from when it is sent; an ended context ends the wait.
func TestPacerWaitsForTheDueTime(t *testing.T) {
	p := newPacer(time.Now().Add(20*time.Millisecond), 1, 0, 1)
	due := p.next
	got, ok := p.wait(context.Background())
	if !ok || got.Before(due) {
		t.Errorf("wait returned %v, %v; want a time not before %v", got, ok, due)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := p.wait(ctx); ok {
		t.Error("wait went on after its context ended")
	}
}

// TestLoadRate: with --rate the load test makes no more calls than were
// due in its time (a closed loop makes hundreds), and says so.
func TestLoadRate(t *testing.T) {
	g := mustStartMain(t, benchConfig)
	_, oag := g.mustKey(t, "alice", "")
	out, errOut, err := runCLI(t, nil, "load", "--url", g.mcpURL("bench"), "--key", oag,
		"--tool", "echo", "--args", `{"text":"hi"}`, "--sessions", "2", "--rate", "50", "--duration", "400ms")
	if err != nil {
		t.Fatalf("load --rate: %v\n%s", err, errOut)
	}
	m := regexp.MustCompile(`summary: calls=(\d+) .* offered_per_s=50\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("load --rate printed %q, want a summary with offered_per_s=50", out)
	}
	// 50 calls/s for 0.4 s: 20 calls were due, at most one more a session
	// at the edges.
	if n, _ := strconv.Atoi(m[1]); n < 1 || n > 22 {
		t.Errorf("load --rate 50 for 400ms made %d calls, want 1 to 22", n)
	}
}
