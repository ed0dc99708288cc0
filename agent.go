package mcpgate

import (
	"context"
	"regexp"
	"strings"
	"time"
)

// Agent is what an MCP host mounts: its tools are served at /{ID}/mcp.
type Agent struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	OwnerID     string    `json:"owner_id"`
	MCPEnabled  bool      `json:"mcp_enabled"`
	Source      string    `json:"source"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// agentIDPattern keeps agent IDs safe as a URL path segment.
var agentIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidAgentID reports whether id has the shape of an agent ID: 1 to 64
// letters, digits, '_' or '-', starting with a letter or digit, so that it
// is safe as a URL path segment.
func ValidAgentID(id string) bool { return agentIDPattern.MatchString(id) }

// IsReservedAgentID reports whether id is a first path segment the gateway
// serves itself, which no agent may take.
func IsReservedAgentID(id string) bool {
	switch strings.ToLower(id) {
	case "api", "oauth", "healthz", "metrics", "mcp", "ui", "static", "login", "logout", "demo-api", "_demo":
		return true
	}
	return false
}

// Validate returns EINVALID when the agent's ID or fields are unusable.
func (a *Agent) Validate() error {
	if !ValidAgentID(a.ID) {
		return Errorf(EINVALID, "agent id %q: use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit", a.ID)
	}
	if IsReservedAgentID(a.ID) {
		return Errorf(EINVALID, "agent id %q is reserved for the gateway's own paths", a.ID)
	}
	if a.OwnerID == "" {
		return Errorf(EINVALID, "agent %q: owner is required", a.ID)
	}
	return nil
}

// AgentFilter narrows ListAgents. Zero fields match everything.
type AgentFilter struct {
	OwnerID string
}

// AgentStore keeps agents.
type AgentStore interface {
	// CreateAgent stores a, setting its timestamps. Returns ECONFLICT if the
	// ID is taken and EINVALID if the owner does not exist.
	CreateAgent(ctx context.Context, a *Agent) error
	// UpdateAgent saves a's name, description, owner, mcp_enabled and
	// source. Returns ENOTFOUND if it does not exist.
	UpdateAgent(ctx context.Context, a *Agent) error
	// FindAgent returns ENOTFOUND if there is no such agent.
	FindAgent(ctx context.Context, id string) (*Agent, error)
	// ListAgents returns the matching agents ordered by ID.
	ListAgents(ctx context.Context, f AgentFilter) ([]*Agent, error)
	// DeleteAgent removes the agent with its skills, tools, agent keys and
	// sessions. Returns ENOTFOUND if it does not exist.
	DeleteAgent(ctx context.Context, id string) error
}
