package pipeline

import (
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// waitNotifier keeps a call's progress notifications and log messages.
type waitNotifier struct {
	recordingNotifier
	logMu sync.Mutex
	logs  []string
}

func (n *waitNotifier) Log(level, logger string, data any) {
	n.logMu.Lock()
	defer n.logMu.Unlock()
	n.logs = append(n.logs, level+" "+logger+" "+data.(string))
}

func (n *waitNotifier) logged() []string {
	n.logMu.Lock()
	defer n.logMu.Unlock()
	return append([]string(nil), n.logs...)
}

// stepClock is a clock that moves on by step each time it is read.
type stepClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

var waitingText = regexp.MustCompile(`^waiting for approval by alice, (\d+m)?\d+s left$`)

// TestApprovalWaitReports: a waiting call logs whom it waits for once and
// reports it as progress every 10 s, each report with a larger progress
// than the last (clients drop the others) and below the 1 of "done".
func TestApprovalWaitReports(t *testing.T) {
	g := newGateHarness(t)
	g.p.opts.Now = (&stepClock{now: time.Unix(1e9, 0), step: 3 * time.Second}).Now
	g.p.opts.ApprovalPoll = time.Millisecond
	n := &waitNotifier{}
	done := make(chan error, 1)
	go func() {
		c := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "delete", Arguments: json.RawMessage(`{}`),
			Caller: mcpgate.Caller{Identity: "user:u1"}, Notifier: n}
		_, err := g.p.Call(context.Background(), c)
		done <- err
	}()
	a := <-g.approvals.created
	for len(n.progress()) < 3 {
		mcpgate.Sleep(context.Background(), time.Millisecond)
	}
	g.decide(t, a, mcpgate.ApprovalApproved, "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	events := n.progress()
	waiting := events[:len(events)-2] // then the pipeline's own "calling" 0/1 (the transport drops it) and "done" 1/1
	last := -1.0
	for _, e := range waiting {
		if e.Progress <= last || e.Progress >= 1 || !waitingText.MatchString(e.Message) {
			t.Fatalf("waiting progress %+v after %v; want growing values below 1 saying whom it waits for", e, last)
		}
		last = e.Progress
	}
	if end := events[len(events)-1]; end.Progress != 1 || end.Total != 1 {
		t.Fatalf("last progress %+v; want done, 1/1", end)
	}
	if logs := n.logged(); len(logs) != 1 || !waitingText.MatchString(logs[0][len("info mcpgate "):]) {
		t.Fatalf("logs = %q; want one message saying whom the call waits for", logs)
	}
}

// decidedAtOnce is an approval store whose approvals are approved as they
// are created, before a waiting call first reads them.
type decidedAtOnce struct{ *memApprovals }

func (d decidedAtOnce) CreateApproval(ctx context.Context, a *mcpgate.Approval) error {
	if err := d.memApprovals.CreateApproval(ctx, a); err != nil {
		return err
	}
	_, err := d.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalApproved, Reviewer: "alice", At: time.Now()})
	return err
}

// TestApprovalNoticesBeforeADecision: a call whose approval is decided
// before its first look still heard whom it waited for, as a log message
// and as progress (a reviewer quicker than the gateway's goroutine).
func TestApprovalNoticesBeforeADecision(t *testing.T) {
	g := newGateHarness(t)
	g.p.opts.Approvals = decidedAtOnce{g.approvals}
	n := &waitNotifier{}
	c := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "delete", Arguments: json.RawMessage(`{}`),
		Caller: mcpgate.Caller{Identity: "user:u1"}, Notifier: n}
	if _, err := g.p.Call(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if logs := n.logged(); len(logs) != 1 || !waitingText.MatchString(logs[0][len("info mcpgate "):]) {
		t.Fatalf("logs = %q; want one message saying whom the call waits for", logs)
	}
	if events := n.progress(); len(events) == 0 || !waitingText.MatchString(events[0].Message) {
		t.Fatalf("progress = %+v; want a report of the wait first", events)
	}
}
