package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Tasks runs task-augmented tools/calls (the 2025-11-25 tasks utility):
// package tasks implements it. Tasks belong to the caller's identity and
// the agent, not to a session, so a client may start a task on one
// connection and fetch it on another.
type Tasks interface {
	// Start stores a task for call and runs it in the background; ttl 0
	// means the default.
	Start(ctx context.Context, call *mcpgate.Call, ttl time.Duration) (*mcpgate.Task, error)
	// Get returns a task; ENOTFOUND if unknown or expired.
	Get(ctx context.Context, id string) (*mcpgate.Task, error)
	// Wait returns the task once it has ended.
	Wait(ctx context.Context, id string) (*mcpgate.Task, error)
	// List returns a page of the tasks f selects and the next cursor.
	List(ctx context.Context, f mcpgate.TaskFilter) ([]*mcpgate.Task, string, error)
	// Cancel cancels an unfinished task; ECONFLICT when it had ended.
	Cancel(ctx context.Context, id string) (*mcpgate.Task, error)
	// PollInterval is how often clients should poll.
	PollInterval() time.Duration
}

// tasksCapability is the server's tasks capability: tools/call may be
// task-augmented, and tasks/list and tasks/cancel are served.
const tasksCapability = `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`

// relatedTaskKey is the _meta key that ties a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// tasksFor reports whether sessions of version v get the tasks utility.
func (s *Server) tasksFor(v string) bool { return s.tasks != nil && v >= "2025-11-25" }

// withTasks adds the tasks capability to caps for version v.
func (s *Server) withTasks(caps json.RawMessage, v string) json.RawMessage {
	if !s.tasksFor(v) {
		return caps
	}
	b := append([]byte(nil), caps[:len(caps)-1]...)
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, tasksCapability...)
	return append(b, '}')
}

// wireTask is a Task in MCP's shape.
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// toWire returns t in MCP's shape; unfinished tasks advise poll.
func toWire(t *mcpgate.Task, poll time.Duration) wireTask {
	w := wireTask{
		TaskID: t.ID, Status: string(t.Status), StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TTL: t.TTL.Milliseconds(),
	}
	if !t.Status.Terminal() {
		w.PollInterval = poll.Milliseconds()
	}
	return w
}

// encodeTask encodes t, or {"task": t} when wrapped (CreateTaskResult).
func encodeTask(t *mcpgate.Task, poll time.Duration, wrapped bool) ([]byte, error) {
	var v any = toWire(t, poll)
	if wrapped {
		v = struct {
			Task any `json:"task"`
		}{v}
	}
	return json.Marshal(v)
}

// TaskStatusParams returns the params of notifications/tasks/status for t:
// the whole task, as the 2025-11-25 tasks utility sends it.
func TaskStatusParams(t *mcpgate.Task, poll time.Duration) json.RawMessage {
	b, err := encodeTask(t, poll, false)
	if err != nil {
		panic(err) // strings and numbers always encode
	}
	return b
}
