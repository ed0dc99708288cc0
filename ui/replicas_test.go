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

// heldStore is a Store whose first ListApprovals says so on entered and
// then runs only once release is closed, whatever its context says, as a
// SQLite statement being prepared does.
type heldStore struct {
	ui.Store
	once             sync.Once
	entered, release chan struct{}
}

func (s *heldStore) ListApprovals(ctx context.Context, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error) {
	s.once.Do(func() {
		close(s.entered)
		<-s.release
	})
	return s.Store.ListApprovals(ctx, f)
}

// TestCloseWaitsForTheReplicasFollower: Close returns only once the
// goroutine that follows the other replicas' approvals has ended, so that
// none of its reads of the store outlives Close, after which the gateway
// closes the store (a read that did reopened SQLite's files in a data dir
// being removed).
func TestCloseWaitsForTheReplicasFollower(t *testing.T) {
	st := &heldStore{entered: make(chan struct{}), release: make(chan struct{})}
	f := mustFixture(t, func(o *ui.Options) {
		st.Store = o.Store
		o.Store, o.Events, o.Signals = st, &hub{}, &signals{wake: make(chan struct{})}
	})
	<-st.entered // the follower's first read
	closed := make(chan struct{})
	go func() {
		f.ui.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while the follower was still reading the store")
	case <-time.After(100 * time.Millisecond):
	}
	close(st.release)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the follower's read ended")
	}
}
