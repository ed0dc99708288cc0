package ui_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/ui"
)

// signals is a bus between this replica and others the test plays: wake
// fires the watcher as another replica's Signal would, and sent counts
// this replica's Signals.
type signals struct {
	wake chan struct{}
	mu   sync.Mutex
	sent []string
}

func (s *signals) Watch(ctx context.Context, topic string) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
				out <- struct{}{}
			}
		}
	}()
	return out
}

func (s *signals) Signal(_ context.Context, topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, topic)
}

func (s *signals) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// TestApprovalsLiveAcrossReplicas: an approval asked for and then decided
// on another replica (stored, then signalled) reaches the open queue of
// this one's browser at once, and an approval event of this replica is
// signalled to the others.
func TestApprovalsLiveAcrossReplicas(t *testing.T) {
	h, sig := &hub{}, &signals{wake: make(chan struct{})}
	f := mustFixture(t, func(o *ui.Options) { withGate(o); o.Events = h; o.Signals = sig })
	alice := f.mustSignIn(t, "alice")
	stream := alice.mustEvents(t)
	// Two wake-ups: the second is taken once the first was delivered, so
	// the dashboard has listed what was pending before the test's own.
	sig.wake <- struct{}{}
	sig.wake <- struct{}{}
	a := f.mustApproval(t, "shop", "files") // asked for elsewhere: this replica's hub hears nothing
	sig.wake <- struct{}{}
	if got, want := stream.next(t), `{"id":"`+a.ID+`","state":"pending"}`; got != want {
		t.Fatalf("event %s, want %s", got, want)
	}
	if _, err := f.store.DecideApproval(context.Background(), a.ID, mcpgate.Decision{State: mcpgate.ApprovalRejected, Reviewer: "root"}); err != nil {
		t.Fatal(err)
	}
	sig.wake <- struct{}{}
	if got, want := stream.next(t), `{"id":"`+a.ID+`","state":"rejected"}`; got != want {
		t.Fatalf("event %s, want %s", got, want)
	}
	h.publish(f.mustApproval(t, "shop", "files")) // asked for here
	deadline := time.Now().Add(10 * time.Second)
	for sig.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if sig.count() == 0 {
		t.Fatal("an approval asked for here was not signalled to the other replicas")
	}
}
