package upstream

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// stalledHealth is a SkillHealthStore whose writes wait until released.
type stalledHealth struct {
	entered chan struct{} // gets a value when a write starts
	release chan struct{} // closed to let writes finish
}

func (s *stalledHealth) PutSkillHealth(context.Context, *mcpgate.SkillHealth) error {
	s.entered <- struct{}{}
	<-s.release
	return nil
}

func (s *stalledHealth) ListSkillHealth(context.Context, string) ([]*mcpgate.SkillHealth, error) {
	return nil, nil
}

// Recording a call, which happens on the call's path, never waits for a
// health write in progress, however slow the store.
func TestCalledDoesNotWaitForWrite(t *testing.T) {
	store := &stalledHealth{entered: make(chan struct{}, 1), release: make(chan struct{})}
	var w healthWriter
	w.init(New(&Options{Health: store, Logger: quietLogger()}), &mcpgate.Skill{AgentID: "agent1", Name: "s1"})
	defer close(store.release)
	w.called() // the first call's time is due: its write starts and stalls
	<-store.entered
	var done atomic.Bool
	go func() {
		w.called()
		done.Store(true)
	}()
	waitFor(t, "a call recorded during a stalled write", done.Load)
}

// Close waits for a call's health write in progress, so that none reaches
// the store after it; a call recorded after Close writes nothing.
func TestCloseWaitsForHealthWrite(t *testing.T) {
	store := &stalledHealth{entered: make(chan struct{}, 1), release: make(chan struct{})}
	m := New(&Options{Health: store, Logger: quietLogger()})
	var w healthWriter
	w.init(m, &mcpgate.Skill{AgentID: "agent1", Name: "s1"})
	w.called()
	<-store.entered
	var closed atomic.Bool
	go func() {
		_ = m.Close()
		closed.Store(true)
	}()
	time.Sleep(100 * time.Millisecond)
	if closed.Load() {
		t.Fatal("Close returned while a health write was in progress")
	}
	close(store.release)
	waitFor(t, "Close once the write ended", closed.Load)
	w.lastWrite = time.Time{} // due again
	w.called()
	select {
	case <-store.entered:
		t.Error("a call recorded after Close wrote its health")
	case <-time.After(100 * time.Millisecond):
	}
}

// recordingHealth is a SkillHealthStore that keeps the last write.
type recordingHealth struct {
	wrote chan mcpgate.SkillHealth
}

func (s *recordingHealth) PutSkillHealth(_ context.Context, h *mcpgate.SkillHealth) error {
	s.wrote <- *h
	return nil
}

func (s *recordingHealth) ListSkillHealth(context.Context, string) ([]*mcpgate.SkillHealth, error) {
	return nil, nil
}

// Recording a call between writes allocates nothing (it runs on every
// call), and the time written is the last call's.
func TestCalledAllocs(t *testing.T) {
	store := &recordingHealth{wrote: make(chan mcpgate.SkillHealth, 4)}
	var w healthWriter
	w.init(New(&Options{Health: store, Logger: quietLogger()}), &mcpgate.Skill{AgentID: "agent1", Name: "s1"})
	w.called() // due: written in the background
	first := <-store.wrote
	if first.LastCallAt == nil || first.LastCallAt.IsZero() {
		t.Fatalf("the call's time was not written: %+v", first)
	}
	if n := testing.AllocsPerRun(100, w.called); n != 0 {
		t.Errorf("called allocates %v times between writes, want 0", n)
	}
	w.state(mcpgate.HealthError) // a change of state writes the last call's time too
	h := <-store.wrote
	if h.LastCallAt == nil || !h.LastCallAt.After(*first.LastCallAt) {
		t.Errorf("the write after more calls has LastCallAt %v, want after %v", h.LastCallAt, first.LastCallAt)
	}
}
