package mcpgate

import (
	"context"
	"encoding/json"
	"time"
)

// Session is an MCP session (Mcp-Session-Id). It is stored so that any
// replica can serve it, and bound to the identity and agent that opened it.
type Session struct {
	ID       string `json:"id"`
	AgentID  string `json:"agent_id"`
	Identity string `json:"identity"`
	// ProtocolVersion is the version negotiated at initialize.
	ProtocolVersion    string          `json:"protocol_version"`
	ClientName         string          `json:"client_name,omitempty"`
	ClientVersion      string          `json:"client_version,omitempty"`
	ClientCapabilities json.RawMessage `json:"client_capabilities,omitempty"`
	// LogLevel is the minimum level of notifications/message sent to the
	// client, set with logging/setLevel; "" means the server's default.
	LogLevel   string     `json:"log_level,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastSeenAt time.Time  `json:"last_seen_at"`
	EndedAt    *time.Time `json:"ended_at,omitempty"`
}

// SessionStore keeps MCP sessions.
type SessionStore interface {
	// CreateSession stores s. Returns ECONFLICT if the ID exists.
	CreateSession(ctx context.Context, s *Session) error
	// FindSession returns the session, ended or not; ENOTFOUND if unknown.
	FindSession(ctx context.Context, id string) (*Session, error)
	// SetSessionLogLevel saves the session's log level. Returns ENOTFOUND
	// if unknown.
	SetSessionLogLevel(ctx context.Context, id, level string) error
	// TouchSession records that the session was used at the given time.
	// Returns ENOTFOUND if unknown.
	TouchSession(ctx context.Context, id string, at time.Time) error
	// EndSession marks the session ended. Returns ENOTFOUND if unknown.
	EndSession(ctx context.Context, id string, at time.Time) error
	// DeleteSessions removes sessions last seen before the given time, and
	// ended ones, returning how many went.
	DeleteSessions(ctx context.Context, lastSeenBefore time.Time) (int, error)
}
