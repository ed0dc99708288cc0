package tasks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate"
)

// end records how task t ended, unless it had ended already (cancelled
// meanwhile), and tells of it.
func (s *Service) end(t *mcpgate.Task, ownerID string, e mcpgate.TaskEnd) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.At = s.opts.Now()
	done, err := s.opts.Store.FinishTask(ctx, t.ID, e)
	switch {
	case mcpgate.ErrorCode(err) == mcpgate.ECONFLICT:
		return // cancelled (or failed by a recovery) first; that end stands
	case err != nil:
		s.opts.Logger.Error("tasks: record the end of a task", "task", t.ID, "err", err)
		return
	}
	s.ended(ctx, done, ownerID)
}

// ended tells the session and the webhooks that t ended.
func (s *Service) ended(ctx context.Context, t *mcpgate.Task, ownerID string) {
	s.opts.Logger.Info("task ended", "task", t.ID, "agent", t.AgentID, "tool", t.Tool, "status", t.Status,
		"duration", t.UpdatedAt.Sub(t.CreatedAt), "error", taskError(t))
	if s.opts.OnStatus != nil {
		s.opts.OnStatus(t)
	}
	if s.opts.Events != nil {
		s.opts.Events.Publish(ctx, event(t, ownerID, s.opts.Now()))
	}
}

// eventTypes maps a terminal status to its event type.
var eventTypes = map[mcpgate.TaskStatus]string{
	mcpgate.TaskCompleted: mcpgate.EventTaskCompleted,
	mcpgate.TaskFailed:    mcpgate.EventTaskFailed,
	mcpgate.TaskCancelled: mcpgate.EventTaskCancelled,
}

// event returns the event of a task that ended.
func event(t *mcpgate.Task, ownerID string, at time.Time) *mcpgate.Event {
	data, err := json.Marshal(struct {
		TaskID string             `json:"task_id"`
		Agent  string             `json:"agent"`
		Tool   string             `json:"tool"`
		Status mcpgate.TaskStatus `json:"status"`
		Error  string             `json:"error,omitempty"`
	}{t.ID, t.AgentID, t.Tool, t.Status, taskError(t)})
	if err != nil {
		panic(err) // strings always encode
	}
	return &mcpgate.Event{ID: mcpgate.NewID("evt_"), Type: eventTypes[t.Status], CreatedAt: at.UTC(),
		UserID: ownerID, AgentID: t.AgentID, Data: data}
}

// taskError says why a task did not complete; "" when it did.
func taskError(t *mcpgate.Task) string {
	switch {
	case t.Status == mcpgate.TaskCompleted:
		return ""
	case t.Error != "":
		return t.Error
	}
	return t.StatusMessage
}
