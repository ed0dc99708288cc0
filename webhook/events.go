package webhook

import (
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate"
)

// approvalData is the data of approval.requested and approval.decided. It
// leaves out the call's arguments, which may hold secrets.
type approvalData struct {
	ApprovalID  string    `json:"approval_id"`
	Agent       string    `json:"agent"`
	Skill       string    `json:"skill"`
	Tool        string    `json:"tool"`
	State       string    `json:"state"`
	RequestedAt time.Time `json:"requested_at"`
	Deadline    time.Time `json:"deadline"`
	Reviewer    string    `json:"reviewer,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	DecidedAt   time.Time `json:"decided_at,omitzero"`
}

// ApprovalEvent returns the event typ (approval.requested or
// approval.decided) of a. Its UserID is left for the Outbox to find: the
// owner of a's agent.
func ApprovalEvent(typ string, a *mcpgate.Approval) *mcpgate.Event {
	b, _ := json.Marshal(&approvalData{ApprovalID: a.ID, Agent: a.AgentID, Skill: a.Skill, Tool: a.Tool, State: string(a.State),
		RequestedAt: a.RequestedAt, Deadline: a.Deadline, Reviewer: a.Reviewer, Reason: a.Reason, DecidedAt: a.DecidedAt})
	return &mcpgate.Event{ID: mcpgate.NewID("evt_"), Type: typ, CreatedAt: time.Now().UTC(), AgentID: a.AgentID, Data: b}
}
