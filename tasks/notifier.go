package tasks

import (
	"context"
	"time"

	"github.com/mcpgate/mcpgate"
)

// notifier is a task's Notifier: nobody waits on the call's stream, so
// what the call reports as progress (the approval gate's "waiting for
// approval by …") becomes the task's status message, which pollers read
// and the starting session is told of.
type notifier struct {
	s    *Service
	task *mcpgate.Task
}

var _ mcpgate.Notifier = (*notifier)(nil)

// Progress records message as the task's status message; progress
// without a message changes nothing.
func (n *notifier) Progress(_, _ float64, message string) {
	if message == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	at := n.s.opts.Now()
	err := n.s.opts.Store.SetTaskMessage(ctx, n.task.ID, message, at)
	if mcpgate.ErrorCode(err) == mcpgate.ECONFLICT {
		return // the task ended (cancelled) while its call still reports
	} else if err != nil {
		n.s.opts.Logger.Warn("tasks: record a task's progress", "task", n.task.ID, "err", err)
		return
	}
	if n.s.opts.OnStatus != nil {
		t := *n.task
		t.StatusMessage, t.UpdatedAt = message, at
		n.s.opts.OnStatus(&t)
	}
}

// Log drops log messages: the audit log and the access log say what a
// task did.
func (n *notifier) Log(string, string, any) {}
