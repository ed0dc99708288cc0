package mcpgate

import (
	"context"
	"time"
)

// The states of a skill's connection to its upstream server.
const (
	HealthConnecting = "connecting" // the first connection or a reconnection is under way
	HealthConnected  = "connected"  // the upstream answered and its tools are known
	HealthError      = "error"      // the last attempt failed; LastError says why
	HealthStopped    = "stopped"    // the gateway closed the connection
)

// SkillHealth is the state of an mcp skill's upstream connection as the
// gateway last saw it, kept so that the CLI and the management API can show
// it without a running server.
type SkillHealth struct {
	AgentID string `json:"agent_id"`
	Skill   string `json:"skill"`
	// State is one of HealthConnecting, HealthConnected, HealthError and
	// HealthStopped.
	State string `json:"state"`
	// Tools is how many tools the upstream offered at its last discovery.
	Tools int `json:"tools"`
	// ProtocolVersion is the revision the gateway negotiated with the
	// upstream at its last connection (2026-07-28 for the stateless one);
	// empty before the first.
	ProtocolVersion string     `json:"protocol_version,omitempty"`
	LastError       string     `json:"last_error,omitempty"`
	LastErrorAt     *time.Time `json:"last_error_at,omitempty"`
	// LastCallAt is when a call last succeeded, recorded at most about once
	// a minute.
	LastCallAt *time.Time `json:"last_call_at,omitempty"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// SkillHealthStore keeps the health of skills' upstream connections. A
// skill's health goes when the skill does.
type SkillHealthStore interface {
	// PutSkillHealth creates or replaces the skill's health and sets its
	// UpdatedAt. Returns EINVALID if the skill does not exist.
	PutSkillHealth(ctx context.Context, h *SkillHealth) error
	// ListSkillHealth returns the health of an agent's skills, by skill
	// name; agentID "" lists every agent's, by agent first.
	ListSkillHealth(ctx context.Context, agentID string) ([]*SkillHealth, error)
}
