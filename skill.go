package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// SkillKind names the backend that runs a skill's tools.
type SkillKind string

// The kinds of skill.
const (
	SkillREST  SkillKind = "rest"  // HTTP endpoints described as tools
	SkillMCP   SkillKind = "mcp"   // an upstream MCP server
	SkillAgent SkillKind = "agent" // agent workers over the message service
)

// Delivery says how an agent skill's messages reach its workers.
type Delivery string

// The kinds of delivery.
const (
	DeliveryPull Delivery = "pull" // workers hold GET /api/v1/agent/inbox
	DeliveryPush Delivery = "push" // the gateway POSTs each envelope to the skill's push_url
)

// Defaults for a skill's policy.
const (
	DefaultSkillTimeout     = 60 * time.Second
	DefaultApprovalTimeout  = 5 * time.Minute
	DefaultMaxResponseBytes = 1 << 20
)

// Skill is a group of tools on one agent served by one backend, with the
// policy that applies to every call of them.
type Skill struct {
	AgentID string    `json:"agent_id"`
	Name    string    `json:"name"`
	Kind    SkillKind `json:"kind"`
	// Prefix is prepended to each tool's name on the agent, to keep names
	// unique when two skills offer the same tool.
	Prefix string `json:"prefix,omitempty"`
	// BaseURL is where a rest skill's relative request paths point.
	BaseURL string `json:"base_url,omitempty"`
	// URL is the Streamable HTTP endpoint of an mcp skill's upstream server.
	URL string `json:"url,omitempty"`
	// Command starts an mcp skill's upstream server as a child process that
	// speaks MCP over stdio, with Args, Env (values may reference secrets as
	// ${env:NAME}) and working directory Cwd.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// Delivery is how an agent skill's messages reach the agent's workers:
	// DeliveryPull (the default) or DeliveryPush to PushURL.
	Delivery Delivery `json:"delivery,omitempty"`
	PushURL  string   `json:"push_url,omitempty"`
	// PushSecret keys the HMAC-SHA256 signature of pushed envelopes; it is
	// a ${env:NAME} reference, never the secret itself.
	PushSecret string `json:"push_secret,omitempty"`
	// AllowPrivate lets outbound requests reach loopback and private
	// addresses, which the SSRF guard refuses otherwise.
	AllowPrivate bool `json:"allow_private,omitempty"`
	// Headers go on every outbound request. Values may reference secrets as
	// ${env:NAME}; the reference is stored, never the secret.
	Headers map[string]string `json:"headers,omitempty"`
	Timeout Duration          `json:"timeout,omitempty"`
	// AutoApprove false makes every call of the skill's tools wait for a
	// reviewer's approval (the approval gate), unless a tool's Approval
	// says otherwise. ApprovalTimeout is how long a call waits before it
	// is rejected (DefaultApprovalTimeout when zero), and Approvers are the
	// users, besides the agent's owner and the admins, who may decide.
	AutoApprove     bool     `json:"auto_approve"`
	ApprovalTimeout Duration `json:"approval_timeout,omitempty"`
	Approvers       []string `json:"approvers,omitempty"`
	// Approval says who confirms a gated call: ApprovalReviewers (also
	// when empty) or ApprovalCaller, the calling user through an MCP
	// elicitation when its client declared the capability.
	Approval string `json:"approval,omitempty"`
	// MaxResponseBytes caps how much of a backend response becomes the
	// result; larger responses are cut with a note.
	MaxResponseBytes int64     `json:"max_response_bytes,omitempty"`
	Tools            []*Tool   `json:"tools"`
	Source           string    `json:"source"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`

	// RateLimit caps how often one caller may call the skill's tools on
	// the agent; nil leaves it to the gateway's default.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
}

// Replacing returns next as it is stored in place of s, the stored skill of
// the same name: with s's Source, since a skill stays with whatever made it
// (the config file, the API, the CLI), and, when both are of kind mcp and
// next declares no tools, with the tools s's upstream was discovered to
// offer, which only discovery replaces.
func (s *Skill) Replacing(next *Skill) *Skill {
	kept := *next
	kept.Source = s.Source
	if next.Kind == SkillMCP && s.Kind == SkillMCP && len(next.Tools) == 0 {
		kept.Tools = s.Tools
	}
	return &kept
}

// skillNamePattern keeps skill names short and printable.
var skillNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CallTimeout returns the skill's timeout, or the default.
func (s *Skill) CallTimeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultSkillTimeout
	}
	return time.Duration(s.Timeout)
}

// ApprovalWait returns how long a gated call waits for a decision.
func (s *Skill) ApprovalWait() time.Duration {
	if s.ApprovalTimeout <= 0 {
		return DefaultApprovalTimeout
	}
	return time.Duration(s.ApprovalTimeout)
}

// NeedsApproval reports whether calls of tool t wait for a reviewer: the
// tool's Approval when set, otherwise not AutoApprove.
func (s *Skill) NeedsApproval(t *Tool) bool {
	if t != nil {
		switch t.Approval {
		case ApprovalRequired:
			return true
		case ApprovalNever:
			return false
		}
	}
	return !s.AutoApprove
}

// The values of Skill.Approval.
const (
	ApprovalReviewers = "reviewers" // the agent's owner, the skill's approvers, admins
	ApprovalCaller    = "caller"    // the calling user, through elicitation/create
)

// AsksCaller reports whether the skill's gated calls ask the calling user
// to confirm them, rather than a reviewer, when the client can be asked.
func (s *Skill) AsksCaller() bool { return s.Approval == ApprovalCaller }

// ResponseLimit returns the skill's response cap, or the default.
func (s *Skill) ResponseLimit() int64 {
	if s.MaxResponseBytes <= 0 {
		return DefaultMaxResponseBytes
	}
	return s.MaxResponseBytes
}

// Validate checks the skill's own fields and each tool's, but not the
// backend-specific binding of its tools; returns EINVALID naming the field.
func (s *Skill) Validate() error {
	if !skillNamePattern.MatchString(s.Name) {
		return Errorf(EINVALID, "skill name %q: use 1 to 64 letters, digits, '_', '.' or '-'", s.Name)
	}
	switch s.Kind {
	case SkillREST, SkillMCP, SkillAgent:
	default:
		return Errorf(EINVALID, "skill %q: kind %q is not one of rest, mcp, agent", s.Name, s.Kind)
	}
	if s.Prefix != "" && !toolNameChars.MatchString(s.Prefix) {
		return Errorf(EINVALID, "skill %q: prefix %q may only hold letters, digits, '_', '.' or '-'", s.Name, s.Prefix)
	}
	if s.RateLimit != nil {
		if err := s.RateLimit.Validate(); err != nil {
			return Errorf(EINVALID, "skill %q: %s", s.Name, ErrorMessage(err))
		}
	}
	seen := map[string]bool{}
	for i, t := range s.Tools {
		if err := t.Validate(s.Prefix); err != nil {
			return Errorf(EINVALID, "skill %q: tools[%d]: %s", s.Name, i, ErrorMessage(err))
		}
		if seen[t.Name] {
			return Errorf(EINVALID, "skill %q: tool %q is declared twice", s.Name, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// SkillStore keeps skills together with their tools.
type SkillStore interface {
	// PutSkill creates the skill or replaces it and its tools, atomically.
	// Putting a skill equal to the stored one changes nothing, not even its
	// UpdatedAt. Returns EINVALID if the agent does not exist.
	PutSkill(ctx context.Context, s *Skill) error
	// FindSkill returns ENOTFOUND if the agent has no such skill.
	FindSkill(ctx context.Context, agentID, name string) (*Skill, error)
	// ListSkills returns an agent's skills with their tools, in the order
	// they were first put; agentID "" lists every agent's skills.
	ListSkills(ctx context.Context, agentID string) ([]*Skill, error)
	// DeleteSkill removes a skill and its tools. Returns ENOTFOUND if the
	// agent has no such skill.
	DeleteSkill(ctx context.Context, agentID, name string) error
}

// Duration is a time.Duration written as text ("30s", "5m") in JSON and
// YAML.
type Duration time.Duration

// MarshalText writes d as Go duration text.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}

// UnmarshalText reads Go duration text such as "90s" or "1m30s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 30s or 5m", b)
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", b)
	}
	*d = Duration(v)
	return nil
}

// rawIsObject reports whether raw holds a JSON object.
func rawIsObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
