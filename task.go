package mcpgate

import (
	"context"
	"encoding/json"
	"time"
)

// TaskStatus is where a task stands (MCP 2025-11-25's task statuses).
type TaskStatus string

// The statuses of a task. A task starts working; completed, failed and
// cancelled are terminal and never change again.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Valid reports whether s is one of the statuses.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
		return true
	}
	return false
}

// Terminal reports whether s is completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is one tools/call run in the background: submitted over the
// management API or as an MCP task-augmented tools/call, polled for and
// cancelled by its caller, kept after a restart.
type Task struct {
	// ID is "task_…".
	ID      string `json:"id"`
	AgentID string `json:"agent_id"`
	// Tool is the tool's name as the agent serves it.
	Tool string `json:"tool"`
	// Identity, UserID, CredentialKind and CredentialID name the caller
	// (see Caller); tasks are scoped to Identity, not to a session.
	Identity       string         `json:"identity"`
	UserID         string         `json:"user_id,omitempty"`
	CredentialKind CredentialKind `json:"credential_kind,omitempty"`
	CredentialID   string         `json:"credential_id,omitempty"`
	// SessionID is the MCP session that created the task, told of its
	// status changes; "" for tasks made over the management API.
	SessionID      string     `json:"session_id,omitempty"`
	ArgsHash       string     `json:"args_hash"`
	IdempotencyKey string     `json:"idempotency_key,omitempty"`
	Status         TaskStatus `json:"status"`
	StatusMessage  string     `json:"status_message,omitempty"`
	// Result is the CallToolResult once the call returned one (completed,
	// or failed with isError).
	Result json.RawMessage `json:"result,omitempty"`
	// ErrorCode and Error are the error the call ended with instead of a
	// result (an Error's code and message).
	ErrorCode string    `json:"error_code,omitempty"`
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// TTL is how long the task is kept from its creation; ExpiresAt is
	// CreatedAt + TTL, after which it may be deleted.
	TTL       time.Duration `json:"-"`
	ExpiresAt time.Time     `json:"expires_at"`
	// Runner is the process running the task and HeartbeatAt when it last
	// said it still does: a working task whose heartbeat is stale belongs
	// to a process that is gone.
	Runner      string    `json:"-"`
	HeartbeatAt time.Time `json:"-"`
}

// Err returns the error the task ended with; nil when it has none.
func (t *Task) Err() error {
	if t.ErrorCode == "" {
		return nil
	}
	return Errorf(t.ErrorCode, "%s", t.Error)
}

// TaskEnd is how a task ends, applied by TaskStore.FinishTask.
type TaskEnd struct {
	Status    TaskStatus
	Message   string
	Result    json.RawMessage
	ErrorCode string
	Error     string
	At        time.Time
}

// TaskFilter selects tasks; empty fields select all.
type TaskFilter struct {
	AgentID string
	// OwnerID keeps the tasks of agents this user owns; Identity the tasks
	// of one caller. Both set keep either.
	OwnerID  string
	Identity string
	Status   TaskStatus
	// Cursor continues a listing where the previous page ended.
	Cursor string
	// Limit is the page size; 0 means 100, and at most 1000 are returned.
	Limit int
}

// TaskStore keeps tasks.
type TaskStore interface {
	// CreateTask stores t, working, setting its ID when empty.
	CreateTask(ctx context.Context, t *Task) error
	// FindTask returns one task; ENOTFOUND if unknown.
	FindTask(ctx context.Context, id string) (*Task, error)
	// FindTaskByKey returns the newest unexpired task of a caller's
	// idempotency key on an agent; ENOTFOUND if none.
	FindTaskByKey(ctx context.Context, identity, agentID, key string, now time.Time) (*Task, error)
	// ListTasks returns the tasks f selects, newest first, and the cursor
	// of the next page ("" after the last). EINVALID for a malformed
	// cursor.
	ListTasks(ctx context.Context, f TaskFilter) ([]*Task, string, error)
	// FinishTask moves a task that is not terminal to e.Status in one
	// conditional update, so that the first end wins on every replica (a
	// cancelled task stays cancelled), and returns the row. ECONFLICT
	// (with the row as it stands) when it had ended, ENOTFOUND when
	// unknown.
	FinishTask(ctx context.Context, id string, e TaskEnd) (*Task, error)
	// SetTaskMessage sets the status message of an unfinished task (what
	// it is waiting for). ECONFLICT when the task has ended (it keeps its
	// own message), ENOTFOUND when unknown.
	SetTaskMessage(ctx context.Context, id, message string, at time.Time) error
	// HeartbeatTasks sets the heartbeat of the runner's unfinished tasks.
	HeartbeatTasks(ctx context.Context, runner string, at time.Time) error
	// FailStaleTasks fails every unfinished task whose heartbeat is before
	// staleBefore and whose runner is not except, with message, and
	// returns them.
	FailStaleTasks(ctx context.Context, staleBefore time.Time, except, message string, at time.Time) ([]*Task, error)
	// DeleteExpiredTasks deletes at most limit tasks expired at now and
	// returns how many went.
	DeleteExpiredTasks(ctx context.Context, now time.Time, limit int) (int64, error)
}
