package api

import (
	"context"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// agentView is an agent as the API shows it: with its owner's name, which
// is what the config file and the CLI call an owner.
type agentView struct {
	*mcpgate.Agent
	Owner string `json:"owner"`
}

// agentCreate is the body of POST /api/v1/agents.
type agentCreate struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	MCPEnabled  bool   `json:"mcp_enabled"`
	// Owner is a user name; only admins may give one other than their own.
	Owner string `json:"owner"`
}

// agentPatch is the body of PATCH /api/v1/agents/{id}: absent fields keep
// their value.
type agentPatch struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	MCPEnabled  *bool   `json:"mcp_enabled"`
	Owner       *string `json:"owner"`
}

// handleAgentList lists the caller's agents; an admin's are every agent,
// or one user's with ?owner=NAME.
func (s *Server) handleAgentList(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	var agents []*mcpgate.Agent
	if c.cred.Kind == mcpgate.CredentialAgentKey {
		a, err := s.readAgent(ctx, c, c.cred.AgentID)
		if err != nil {
			return err
		}
		agents = []*mcpgate.Agent{a}
	} else {
		f, err := s.agentFilter(ctx, c, r.URL.Query().Get("owner"))
		if err != nil {
			return err
		}
		if agents, err = s.opts.Store.ListAgents(ctx, f); err != nil {
			return err
		}
	}
	views, err := s.agentViews(ctx, agents)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": views})
	return nil
}

// agentFilter is whose agents a user key lists.
func (s *Server) agentFilter(ctx context.Context, c *caller, owner string) (mcpgate.AgentFilter, error) {
	switch {
	case owner == "" && c.isAdmin():
		return mcpgate.AgentFilter{}, nil
	case owner == "" || owner == c.user.Name:
		return mcpgate.AgentFilter{OwnerID: c.user.ID}, nil
	case !c.isAdmin():
		return mcpgate.AgentFilter{}, mcpgate.Errorf(mcpgate.EFORBIDDEN, "only admin users may list other users' agents")
	}
	u, err := s.userByName(ctx, "owner", owner)
	if err != nil {
		return mcpgate.AgentFilter{}, err
	}
	return mcpgate.AgentFilter{OwnerID: u.ID}, nil
}

// handleAgentCreate creates an agent owned by the caller, or by the user
// an admin names.
func (s *Server) handleAgentCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := c.canWrite(); err != nil {
		return err
	}
	var in agentCreate
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	owner, err := s.ownerFor(r.Context(), c, in.Owner)
	if err != nil {
		return err
	}
	a := &mcpgate.Agent{ID: in.ID, Name: in.Name, Description: in.Description, OwnerID: owner.ID, MCPEnabled: in.MCPEnabled, Source: mcpgate.SourceAPI}
	if err := a.Validate(); err != nil {
		return withField(err, "id")
	}
	if err := s.opts.Store.CreateAgent(r.Context(), a); err != nil {
		return err
	}
	s.changed(r.Context())
	writeJSON(w, http.StatusCreated, agentView{Agent: a, Owner: owner.Name})
	return nil
}

// ownerFor returns the user an agent goes to: the caller unless an admin
// names another user.
func (s *Server) ownerFor(ctx context.Context, c *caller, name string) (*mcpgate.User, error) {
	if name == "" || name == c.user.Name {
		return c.user, nil
	}
	if !c.isAdmin() {
		return nil, fieldErrorf(mcpgate.EFORBIDDEN, "owner", "only admin users may give an agent to another user")
	}
	return s.userByName(ctx, "owner", name)
}

// userByName finds a user named in a request field; a missing one is
// EINVALID naming the field.
func (s *Server) userByName(ctx context.Context, field, name string) (*mcpgate.User, error) {
	u, err := s.opts.Store.FindUserByName(ctx, name)
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return nil, fieldErrorf(mcpgate.EINVALID, field, "there is no user %q", name)
	}
	return u, err
}

// handleAgentGet shows one agent.
func (s *Server) handleAgentGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	a, err := s.readAgent(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	views, err := s.agentViews(r.Context(), []*mcpgate.Agent{a})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, views[0])
	return nil
}

// handleAgentPatch renames an agent, edits its description, turns MCP on
// or off, or (admins) gives it to another user.
func (s *Server) handleAgentPatch(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	a, err := s.writeAgent(ctx, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	var in agentPatch
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	setIf(&a.Name, in.Name)
	setIf(&a.Description, in.Description)
	setIf(&a.MCPEnabled, in.MCPEnabled)
	if in.Owner != nil {
		if !c.isAdmin() {
			return fieldErrorf(mcpgate.EFORBIDDEN, "owner", "only admin users may give an agent to another user")
		}
		u, err := s.userByName(ctx, "owner", *in.Owner)
		if err != nil {
			return err
		}
		a.OwnerID = u.ID
	}
	if err := s.opts.Store.UpdateAgent(ctx, a); err != nil {
		return err
	}
	s.changed(ctx)
	views, err := s.agentViews(ctx, []*mcpgate.Agent{a})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, views[0])
	return nil
}

// setIf sets *dst to *v when v is not nil.
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// handleAgentDelete deletes an agent with its skills, tools, agent keys and
// sessions; its keys stop working at once.
func (s *Server) handleAgentDelete(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	a, err := s.writeAgent(ctx, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	keys, err := s.opts.Store.ListKeys(ctx, mcpgate.KeyFilter{AgentID: a.ID})
	if err != nil {
		return err
	}
	if err := s.opts.Store.DeleteAgent(ctx, a.ID); err != nil {
		return err
	}
	s.forget(keys)
	s.changed(ctx)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// forget drops keys from the authenticator's cache.
func (s *Server) forget(keys []*mcpgate.APIKey) {
	if s.opts.Forget == nil {
		return
	}
	for _, k := range keys {
		s.opts.Forget(k.Hash)
	}
}

// agentViews adds each agent's owner name.
func (s *Server) agentViews(ctx context.Context, agents []*mcpgate.Agent) ([]agentView, error) {
	names := map[string]string{}
	views := make([]agentView, len(agents))
	for i, a := range agents {
		name, ok := names[a.OwnerID]
		if !ok {
			u, err := s.opts.Store.FindUserByID(ctx, a.OwnerID)
			if err != nil {
				return nil, wrapf(err, "owner of agent %s", a.ID)
			}
			name, names[a.OwnerID] = u.Name, u.Name
		}
		views[i] = agentView{Agent: a, Owner: name}
	}
	return views, nil
}
