package mcpgate

import (
	"encoding/json"
	"time"
)

// Event types: what webhooks subscribe to. The pipeline's record stage
// will publish the call events, the approval gate the approval events, and
// tasks the task events.
const (
	EventCallCompleted     = "call.completed"
	EventCallFailed        = "call.failed"
	EventApprovalRequested = "approval.requested"
	EventApprovalDecided   = "approval.decided"
	EventTaskCompleted     = "task.completed"
	EventTaskFailed        = "task.failed"
	EventTaskCancelled     = "task.cancelled"
)

// EventTypes lists every event type, in the order above.
func EventTypes() []string {
	return []string{EventCallCompleted, EventCallFailed, EventApprovalRequested, EventApprovalDecided,
		EventTaskCompleted, EventTaskFailed, EventTaskCancelled}
}

// Event is something that happened which the outside world may be told of
// (a webhook delivery's body is its ID, Type, CreatedAt and Data).
type Event struct {
	// ID is "evt_…"; receivers use it to drop duplicates.
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	// UserID owns the event: the owner of the agent it concerns, whose
	// webhooks receive it. AgentID is that agent.
	UserID  string `json:"-"`
	AgentID string `json:"-"`
	// Data is the event's JSON payload.
	Data json.RawMessage `json:"data"`
}
