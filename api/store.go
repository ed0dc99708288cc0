package api

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/skilledit"
)

// Store is what the management API reads and writes: the methods of
// mcpgate.Store its handlers call, and no others.
type Store interface {
	UserStore
	AgentStore
	KeyStore
	SkillStore
	MessageStore
	CallStore
	ApprovalStore
	FileStore
}

// FileStore keeps uploaded files' metadata (mcpgate.FileStore).
type FileStore interface {
	CreateFile(ctx context.Context, f *mcpgate.File) error
	FindFile(ctx context.Context, id string) (*mcpgate.File, error)
	MoveFile(ctx context.Context, id, from, to, sha string) error
}

// UserStore keeps users (mcpgate.UserStore).
type UserStore interface {
	CreateUser(ctx context.Context, u *mcpgate.User) error
	UpdateUser(ctx context.Context, u *mcpgate.User) error
	FindUserByID(ctx context.Context, id string) (*mcpgate.User, error)
	FindUserByName(ctx context.Context, name string) (*mcpgate.User, error)
	ListUsers(ctx context.Context) ([]*mcpgate.User, error)
	DeleteUser(ctx context.Context, id string) error
}

// AgentStore keeps agents (mcpgate.AgentStore).
type AgentStore interface {
	CreateAgent(ctx context.Context, a *mcpgate.Agent) error
	UpdateAgent(ctx context.Context, a *mcpgate.Agent) error
	FindAgent(ctx context.Context, id string) (*mcpgate.Agent, error)
	ListAgents(ctx context.Context, f mcpgate.AgentFilter) ([]*mcpgate.Agent, error)
	DeleteAgent(ctx context.Context, id string) error
}

// KeyStore keeps API keys (mcpgate.KeyStore).
type KeyStore interface {
	CreateKey(ctx context.Context, k *mcpgate.APIKey) error
	FindKey(ctx context.Context, id string) (*mcpgate.APIKey, error)
	ListKeys(ctx context.Context, f mcpgate.KeyFilter) ([]*mcpgate.APIKey, error)
	RevokeKey(ctx context.Context, id string, at time.Time) error
	UpdateKey(ctx context.Context, k *mcpgate.APIKey) error
}

// SkillStore reads skills and their health (mcpgate.SkillStore and
// mcpgate.SkillHealthStore); skills change through a SkillEditor.
type SkillStore interface {
	FindSkill(ctx context.Context, agentID, name string) (*mcpgate.Skill, error)
	ListSkills(ctx context.Context, agentID string) ([]*mcpgate.Skill, error)
	ListSkillHealth(ctx context.Context, agentID string) ([]*mcpgate.SkillHealth, error)
}

// MessageStore reads channels and hands agent workers their messages
// (mcpgate.MessageStore); messages are posted through the MessageBus.
type MessageStore interface {
	FindChannel(ctx context.Context, id string) (*mcpgate.Channel, error)
	ListMessages(ctx context.Context, channelID string, afterSeq int64, limit int) ([]*mcpgate.Message, error)
	ClaimMessages(ctx context.Context, agentID, skill string, now time.Time, visibility time.Duration, limit int) ([]*mcpgate.Message, error)
	RenewMessages(ctx context.Context, agentID string, held map[string]time.Time, now time.Time) ([]string, error)
	ReleaseMessages(ctx context.Context, agentID string, held map[string]time.Time) error
	AckMessage(ctx context.Context, agentID, id string) error
}

// CallStore reads the audit log (mcpgate.CallStore).
type CallStore interface {
	ListCalls(ctx context.Context, f mcpgate.CallFilter) ([]*mcpgate.CallRecord, string, error)
	FindCall(ctx context.Context, id string) (*mcpgate.CallRecord, error)
}

// SkillEditor changes one skill of an agent the one way skills change
// outside the config file: skilledit.Editor.
type SkillEditor interface {
	// Apply changes the skill name of agent agentID with edit, after the
	// checks; see skilledit.Apply.
	Apply(ctx context.Context, agentID, name, source string, edit skilledit.Edit) (*mcpgate.Skill, error)
}

// Authenticator turns a request's headers into a credential.
type Authenticator interface {
	Authenticate(r *http.Request) (*mcpgate.Credential, error)
}
