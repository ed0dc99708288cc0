package api

import (
	"context"
	"net/http"
	"os"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/skilledit"
)

// skillInput is the body that creates or replaces a skill, with the
// config file's fields.
type skillInput struct {
	Name    string            `json:"name"`
	Kind    mcpgate.SkillKind `json:"kind"`
	Prefix  string            `json:"prefix"`
	BaseURL string            `json:"base_url"`
	// AllowPrivate lets the skill reach loopback and private addresses.
	AllowPrivate bool              `json:"allow_private"`
	Headers      map[string]string `json:"headers"`
	Timeout      mcpgate.Duration  `json:"timeout"`
	// AutoApprove is true when absent; false makes calls wait for a
	// reviewer (the approval gate), with ApprovalTimeout and Approvers.
	AutoApprove     *bool            `json:"auto_approve"`
	ApprovalTimeout mcpgate.Duration `json:"approval_timeout"`
	Approvers       []string         `json:"approvers"`
	// Approval is who confirms a gated call: reviewers or caller.
	Approval         string          `json:"approval"`
	MaxResponseBytes int64           `json:"max_response_bytes"`
	Tools            []*mcpgate.Tool `json:"tools"`
	// URL or Command, Args, Env and Cwd reach an mcp skill's upstream.
	URL     string            `json:"url"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	// Delivery, PushURL and PushSecret say how an agent skill's messages
	// reach its workers.
	Delivery   mcpgate.Delivery `json:"delivery"`
	PushURL    string           `json:"push_url"`
	PushSecret string           `json:"push_secret"`
	// RateLimit caps each caller's calls of the skill's tools.
	RateLimit *mcpgate.RateLimit `json:"rate_limit"`
}

// skill returns the skill the input describes; kind defaults to rest.
// An mcp skill's tools are discovered from its upstream, never declared.
func (in *skillInput) skill(agentID string) (*mcpgate.Skill, error) {
	if in.Kind == mcpgate.SkillMCP && len(in.Tools) > 0 {
		return nil, fieldErrorf(mcpgate.EINVALID, "tools", "the tools of an mcp skill are discovered from the upstream server; leave tools out")
	}
	s := &mcpgate.Skill{
		AgentID: agentID, Name: in.Name, Kind: in.Kind, Prefix: in.Prefix, BaseURL: in.BaseURL,
		AllowPrivate: in.AllowPrivate, Headers: in.Headers, Timeout: in.Timeout, AutoApprove: true,
		ApprovalTimeout: in.ApprovalTimeout, Approvers: in.Approvers, Approval: in.Approval, MaxResponseBytes: in.MaxResponseBytes, Tools: in.Tools,
		URL: in.URL, Command: in.Command, Args: in.Args, Env: in.Env, Cwd: in.Cwd,
		Delivery: in.Delivery, PushURL: in.PushURL, PushSecret: in.PushSecret,
		RateLimit: in.RateLimit,
	}
	if s.Kind == mcpgate.SkillAgent && s.Delivery == "" {
		s.Delivery = mcpgate.DeliveryPull
	}
	setIf(&s.AutoApprove, in.AutoApprove)
	if s.Kind == "" {
		s.Kind = mcpgate.SkillREST
	}
	return s, nil
}

// handleSkillList lists an agent's skills with their tools.
func (s *Server) handleSkillList(w http.ResponseWriter, r *http.Request, c *caller) error {
	a, err := s.readAgent(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	skills, err := s.opts.Store.ListSkills(r.Context(), a.ID)
	if err != nil {
		return err
	}
	views, err := s.skillViews(r.Context(), a.ID, skills)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"skills": views})
	return nil
}

// skillView is a skill as the API shows it: with the health of its
// upstream connection, for an mcp skill the gateway has connected, and
// its warnings.
type skillView struct {
	*mcpgate.Skill
	Health *mcpgate.SkillHealth `json:"health,omitempty"`
	// Warnings are what makes the skill's calls fail although it was
	// accepted, such as a ${env:NAME} whose variable is not set; they show
	// until it is fixed.
	Warnings []warning `json:"warnings,omitempty"`
}

// warning is a problem that does not stop a skill from being written but
// makes its calls fail until it is fixed.
type warning struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// warnings returns sk's warnings: each field whose ${env:NAME} names a
// variable the gateway's environment (the one the REST backend and
// upstream links read at call time) does not set.
func warnings(sk *mcpgate.Skill) []warning {
	var out []warning
	for _, p := range sk.UnsetSecrets(os.LookupEnv) {
		out = append(out, warning{Field: p.Field, Message: p.Msg + "; the skill's calls fail until it is set"})
	}
	return out
}

// wroteSkill answers a write of sk with the skill and its warnings, which
// it also logs.
func (s *Server) wroteSkill(w http.ResponseWriter, status int, sk *mcpgate.Skill) {
	view := skillView{Skill: sk, Warnings: s.logWarnings(sk)}
	writeJSON(w, status, view)
}

// logWarnings logs sk's warnings when it was written, and returns them.
func (s *Server) logWarnings(sk *mcpgate.Skill) []warning {
	ws := warnings(sk)
	for _, wr := range ws {
		s.opts.Logger.Warn("skill written with a problem its calls will hit", "agent", sk.AgentID, "skill", sk.Name, "field", wr.Field, "problem", wr.Message)
	}
	return ws
}

// skillViews pairs an agent's skills with their health.
func (s *Server) skillViews(ctx context.Context, agentID string, skills []*mcpgate.Skill) ([]skillView, error) {
	health, err := s.opts.Store.ListSkillHealth(ctx, agentID)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*mcpgate.SkillHealth, len(health))
	for _, h := range health {
		byName[h.Skill] = h
	}
	views := make([]skillView, len(skills))
	for i, sk := range skills {
		views[i] = skillView{Skill: sk, Health: byName[sk.Name], Warnings: warnings(sk)}
	}
	return views, nil
}

// handleSkillGet shows one skill with its tools.
func (s *Server) handleSkillGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	sk, err := s.readSkill(r.Context(), c, r.PathValue("id"), r.PathValue("skill"))
	if err != nil {
		return err
	}
	views, err := s.skillViews(r.Context(), sk.AgentID, []*mcpgate.Skill{sk})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, views[0])
	return nil
}

// readSkill returns a skill of an agent the caller may read.
func (s *Server) readSkill(ctx context.Context, c *caller, agentID, name string) (*mcpgate.Skill, error) {
	a, err := s.readAgent(ctx, c, agentID)
	if err != nil {
		return nil, err
	}
	return s.opts.Store.FindSkill(ctx, a.ID, name)
}

// handleSkillCreate adds a skill with its tools; ECONFLICT if the agent
// has one of that name.
func (s *Server) handleSkillCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in skillInput
	a, err := s.decodeForAgent(w, r, c, &in)
	if err != nil {
		return err
	}
	sk, err := s.editSkill(r.Context(), c, a.ID, in.Name, func(cur *mcpgate.Skill) (*mcpgate.Skill, error) {
		if cur != nil {
			return nil, fieldErrorf(mcpgate.ECONFLICT, "name", "agent %q has a skill %q already; PUT it to replace it", a.ID, in.Name)
		}
		return in.skill(a.ID)
	})
	if err != nil {
		return err
	}
	s.wroteSkill(w, http.StatusCreated, sk)
	return nil
}

// handleSkillPut creates or replaces a skill with its tools.
func (s *Server) handleSkillPut(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in skillInput
	a, err := s.decodeForAgent(w, r, c, &in)
	if err != nil {
		return err
	}
	name := r.PathValue("skill")
	if err := samePathName("name", in.Name, name); err != nil {
		return err
	}
	in.Name = name
	created := false
	sk, err := s.editSkill(r.Context(), c, a.ID, name, func(cur *mcpgate.Skill) (*mcpgate.Skill, error) {
		created = cur == nil
		return in.skill(a.ID)
	})
	if err != nil {
		return err
	}
	s.wroteSkill(w, createdOrOK(created), sk)
	return nil
}

// handleSkillDelete removes a skill and its tools.
func (s *Server) handleSkillDelete(w http.ResponseWriter, r *http.Request, c *caller) error {
	a, err := s.writeAgent(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	name := r.PathValue("skill")
	_, err = s.editSkill(r.Context(), c, a.ID, name, func(cur *mcpgate.Skill) (*mcpgate.Skill, error) {
		if cur == nil {
			return nil, noSkill(a.ID, name)
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// decodeForAgent checks that the caller may change the path's agent, then
// reads the body into v.
func (s *Server) decodeForAgent(w http.ResponseWriter, r *http.Request, c *caller, v any) (*mcpgate.Agent, error) {
	a, err := s.writeAgent(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return a, decodeJSON(w, r, v)
}

// samePathName refuses a body whose name differs from the path's.
func samePathName(field, body, path string) error {
	if body != "" && body != path {
		return fieldErrorf(mcpgate.EINVALID, field, "%q differs from the name in the path, %q; leave it out or make them equal", body, path)
	}
	return nil
}

// createdOrOK is 201 for a created resource and 200 for a replaced one.
func createdOrOK(created bool) int {
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

// skillEdit returns the new state of a skill from its current one (nil
// when it does not exist); a nil result deletes it. It may run twice.
type skillEdit = skilledit.Edit

// editSkill changes one skill of an agent through skilledit, the one way
// skills change (the config file's checks, registry.Check, then the
// store), after refusing a skill that uses operator powers from a caller
// who is not an administrator (see operatorOnly). A new skill gets Source
// api. The registry then reloads.
func (s *Server) editSkill(ctx context.Context, c *caller, agentID, name string, edit skillEdit) (*mcpgate.Skill, error) {
	next, err := s.editSkillRaw(ctx, c, agentID, name, edit)
	return next, skillError(err)
}

// editSkillRaw is editSkill with the skill's problems as they are
// (mcpgate.Problems with fields relative to the skill).
func (s *Server) editSkillRaw(ctx context.Context, c *caller, agentID, name string, edit skillEdit) (*mcpgate.Skill, error) {
	guarded := func(cur *mcpgate.Skill) (*mcpgate.Skill, error) {
		next, err := edit(cur)
		if err == nil && next != nil {
			err = operatorOnly(c, next)
		}
		return next, err
	}
	next, err := s.opts.Skills.Apply(ctx, agentID, name, mcpgate.SourceAPI, guarded)
	if err != nil {
		return nil, err
	}
	s.changed(ctx)
	return next, nil
}
