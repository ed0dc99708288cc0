package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// checkedSkill is a skill in the file's shape.
type checkedSkill struct {
	Name             string            `json:"name"`
	Kind             mcpgate.SkillKind `json:"kind"`
	Prefix           string            `json:"prefix,omitempty"`
	BaseURL          string            `json:"base_url,omitempty"`
	AllowPrivate     bool              `json:"allow_private,omitempty"`
	Headers          map[string]string `json:"headers,omitempty"`
	Timeout          mcpgate.Duration  `json:"timeout,omitempty"`
	AutoApprove      bool              `json:"auto_approve"`
	ApprovalTimeout  mcpgate.Duration  `json:"approval_timeout,omitempty"`
	MaxResponseBytes int64             `json:"max_response_bytes,omitempty"`
	Tools            []*mcpgate.Tool   `json:"tools,omitempty"`
	URL              string            `json:"url,omitempty"`
	Command          string            `json:"command,omitempty"`
	Args             []string          `json:"args,omitempty"`
	Env              map[string]string `json:"env,omitempty"`
	Cwd              string            `json:"cwd,omitempty"`
	Delivery         mcpgate.Delivery  `json:"delivery,omitempty"`
	PushURL          string            `json:"push_url,omitempty"`
	PushSecret       string            `json:"push_secret,omitempty"`
}

// skillPath is where CheckSkill's document holds the skill.
const skillPath = "agents[0].skills[0]"

// CheckSkill runs the file's checks on one skill of an agent, as if the
// file declared it, so that the CLI and the management API accept exactly
// what the file does: no auto_approve: false, secrets only
// as ${env:NAME}, URLs the SSRF guard allows, request templates whose
// arguments the input schema declares. The variables that secrets name
// need not be set: the REST backend reads them at call time. A problem is
// Errors whose fields are relative to the skill, such as
// "tools[0].request". Name clashes with the agent's other skills are
// registry.Check's job.
func CheckSkill(agentID string, s *mcpgate.Skill) error {
	doc := map[string]any{"agents": []any{map[string]any{
		"id": agentID, "owner": "-", "skills": []checkedSkill{{
			Name: s.Name, Kind: s.Kind, Prefix: s.Prefix, BaseURL: s.BaseURL, AllowPrivate: s.AllowPrivate,
			Headers: s.Headers, Timeout: s.Timeout, AutoApprove: s.AutoApprove, ApprovalTimeout: s.ApprovalTimeout,
			MaxResponseBytes: s.MaxResponseBytes, Tools: declaredTools(s),
			URL: s.URL, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
			Delivery: s.Delivery, PushURL: s.PushURL, PushSecret: s.PushSecret,
		}},
	}}}
	return checkDocument(doc, skillPath)
}

// declaredTools returns the tools a skill of s's kind declares: none for
// an mcp skill, whose tools are discovered.
func declaredTools(s *mcpgate.Skill) []*mcpgate.Tool {
	if s.Kind == mcpgate.SkillMCP {
		return nil
	}
	return s.Tools
}

// CheckUserName runs the file's check of a user name.
func CheckUserName(name string) error {
	if name == "" {
		return Errors{{Field: "name", Msg: "is required: the user's login name"}}
	}
	return checkDocument(map[string]any{"users": []any{map[string]string{"name": name}}}, "users[0]")
}

// checkDocument parses doc as a config file (JSON is YAML) and returns its
// problems with fields relative to under.
func checkDocument(doc any, under string) error {
	data, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode for checking: %w", err)
	}
	_, err = Parse("", data, anyVariableSet)
	var errs Errors
	if !errors.As(err, &errs) {
		return err
	}
	for _, e := range errs {
		e.Line = 0
		e.Field = strings.TrimPrefix(strings.TrimPrefix(e.Field, under), ".")
	}
	return errs
}

// anyVariableSet is a lookup under which every ${env:NAME} is set.
func anyVariableSet(string) (string, bool) { return "set", true }
