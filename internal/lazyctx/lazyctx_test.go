package lazyctx

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

// closedNow reports whether ctx's Done channel is closed.
func closedNow(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// Until something asks for its Done channel, a Context makes nothing, and
// answers Err, Value and Deadline as the made context would; End then
// needs nothing run, and the context reads ended.
func TestMadeOnlyWhenWaitedOn(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	for _, c := range []*Context{WithCancel(parent), WithDeadline(parent, time.Now().Add(time.Hour))} {
		if err := c.Err(); err != nil || c.Value(ctxKey{}) != "v" {
			t.Fatalf("Err %v, Value %v; want nil and the parent's value", err, c.Value(ctxKey{}))
		}
		if c.made.Load() != nil {
			t.Fatal("Err or Value made the context")
		}
		if stop := c.End(); stop != nil {
			t.Fatal("End of a context never made has something to run")
		}
		if !errors.Is(c.Err(), context.Canceled) || !closedNow(c) {
			t.Fatalf("after End: Err %v, Done closed %v; want context.Canceled and closed", c.Err(), closedNow(c))
		}
	}
	if d, ok := WithCancel(parent).Deadline(); ok {
		t.Fatalf("Deadline %v of a context without one", d)
	}
	if d, ok := WithDeadline(parent, time.Now().Add(time.Hour)).Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("Deadline %v %v, want the hour's", d, ok)
	}
}

// Made, it ends at its deadline as context.WithDeadline's does, and End
// returns what ends it; one whose deadline passed before anything waited
// reads DeadlineExceeded.
func TestEndsAtTheDeadline(t *testing.T) {
	c := WithDeadline(context.Background(), time.Now().Add(20*time.Millisecond))
	<-c.Done()
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) {
		t.Fatalf("Err %v, Cause %v; want context.DeadlineExceeded", c.Err(), context.Cause(c))
	}
	if c.End() == nil {
		t.Fatal("End of a made context has nothing to run")
	}

	past := WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	if !errors.Is(past.Err(), context.DeadlineExceeded) || !closedNow(past) {
		t.Fatalf("past the deadline: Err %v, Done closed %v", past.Err(), closedNow(past))
	}
}

// A made context runs on after End until the function End returned runs.
func TestEndOfAMadeContext(t *testing.T) {
	c := WithDeadline(context.Background(), time.Now().Add(time.Hour))
	c.Done()
	stop := c.End()
	if stop == nil || c.Err() != nil || closedNow(c) {
		t.Fatalf("End of a made context: %v to run, Err %v", stop != nil, c.Err())
	}
	stop()
	if !errors.Is(c.Err(), context.Canceled) || !closedNow(c) {
		t.Fatalf("after End's function: Err %v, want context.Canceled", c.Err())
	}
}

// Cancel's cause reaches context.Cause, whether the context was made
// before or after it; a second Cancel changes nothing.
func TestCancelCause(t *testing.T) {
	cause := errors.New("the client cancelled")
	before, after := WithCancel(context.Background()), WithCancel(context.Background())
	before.Done()
	for _, c := range []*Context{before, after} {
		c.Cancel(cause)
		c.Cancel(errors.New("later"))
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(c), cause) || !closedNow(c) {
			t.Fatalf("Err %v, Cause %v, Done closed %v; want context.Canceled and the first cause", c.Err(), context.Cause(c), closedNow(c))
		}
	}
}

// The parent's end reaches it, made or not, with the parent's cause;
// context.AfterFunc on it and contexts made under it end with the parent;
// the parent's earlier deadline is its own.
func TestFollowsItsParent(t *testing.T) {
	cause := errors.New("the session ended")
	parent, cancel := context.WithCancelCause(context.Background())
	early := WithDeadline(parent, time.Now().Add(time.Hour))
	waited := WithCancel(parent)
	ran := make(chan struct{})
	context.AfterFunc(waited, func() { close(ran) })
	child, stopChild := context.WithCancel(WithCancel(parent))
	defer stopChild()
	cancel(cause)
	<-ran
	<-child.Done()
	for _, c := range []*Context{early, waited} {
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(c), cause) || !closedNow(c) {
			t.Fatalf("Err %v, Cause %v; want context.Canceled and the parent's cause", c.Err(), context.Cause(c))
		}
	}

	soon := time.Now().Add(time.Minute)
	short, stop := context.WithDeadline(context.Background(), soon)
	defer stop()
	if d, _ := WithDeadline(short, time.Now().Add(time.Hour)).Deadline(); !d.Equal(soon) {
		t.Fatalf("Deadline %v, want the parent's earlier %v", d, soon)
	}
}

// Done, Err, Cancel and End from many goroutines at once make one context
// and agree on its end (run with -race).
func TestConcurrentUse(t *testing.T) {
	for range 50 {
		c := WithCancel(context.Background())
		var wg sync.WaitGroup
		chans := make([]<-chan struct{}, 8)
		for i := range chans {
			wg.Go(func() {
				switch i % 4 {
				case 0:
					chans[i] = c.Done()
				case 1:
					c.Cancel(nil)
				case 2:
					_ = c.Err()
				default:
					if stop := c.End(); stop != nil {
						stop()
					}
				}
			})
		}
		wg.Wait()
		done := c.Done()
		for i, ch := range chans {
			if ch != nil && ch != done {
				t.Fatalf("goroutine %d got another Done channel", i)
			}
		}
		if !closedNow(c) || !errors.Is(c.Err(), context.Canceled) {
			t.Fatal("the context did not end")
		}
	}
}
