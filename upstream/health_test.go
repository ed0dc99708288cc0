package upstream

import (
	"context"
	"sync/atomic"
	"testing"

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
