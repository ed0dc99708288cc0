package api

import (
	"context"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// caller is who makes a management API request.
type caller struct {
	cred *mcpgate.Credential
	// user is the acting user: the key's user, or the owner of the agent
	// an agent key belongs to. It is nil on the routes of agent workers
	// (see authenticateWorker).
	user *mcpgate.User
}

// isAdmin reports whether the caller may act on everything: a user key of
// an admin. An agent key never is, whoever owns its agent.
func (c *caller) isAdmin() bool {
	return c.cred.Kind == mcpgate.CredentialUserKey && c.user.Admin
}

// canWrite returns EFORBIDDEN for an agent key, which may only read.
func (c *caller) canWrite() error {
	if c.cred.Kind == mcpgate.CredentialAgentKey {
		return mcpgate.Errorf(mcpgate.EFORBIDDEN, "an agent API key may only read its own agent; use a user API key to make changes")
	}
	return nil
}

// callerHandler serves a request whose caller is authenticated.
type callerHandler func(w http.ResponseWriter, r *http.Request, c *caller) error

// authed authenticates the request before h: user API keys act for their
// user, agent API keys read their own agent.
func (s *Server) authed(h callerHandler) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.authenticate(r)
		if err != nil {
			return err
		}
		return h(w, r, c)
	}
}

// admin is authed for routes only admins may use.
func (s *Server) admin(h callerHandler) apiHandler {
	return s.authed(func(w http.ResponseWriter, r *http.Request, c *caller) error {
		if !c.isAdmin() {
			return mcpgate.Errorf(mcpgate.EFORBIDDEN, "only admin users may manage users")
		}
		return h(w, r, c)
	})
}

// authenticate finds the request's caller. Returns EUNAUTHORIZED without
// a usable API key.
func (s *Server) authenticate(r *http.Request) (*caller, error) {
	cred, err := s.opts.Auth.Authenticate(r)
	if err != nil {
		return nil, err
	}
	return s.callerOf(r.Context(), cred)
}

// callerOf returns the caller holding cred, with its user. Returns
// EUNAUTHORIZED if the user no longer exists, EFORBIDDEN for a credential
// other than an API key.
func (s *Server) callerOf(ctx context.Context, cred *mcpgate.Credential) (*caller, error) {
	if cred.Kind != mcpgate.CredentialUserKey && cred.Kind != mcpgate.CredentialAgentKey {
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "the management API takes API keys (oag_… or bak_…)")
	}
	u, err := s.opts.Store.FindUserByID(ctx, cred.UserID)
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the API key's user no longer exists")
	} else if err != nil {
		return nil, err
	}
	return &caller{cred: cred, user: u}, nil
}

// readAgent returns the agent the caller may read: its own (user keys),
// any (admins), or the one of an agent key. Another user's agent is
// ENOTFOUND, so that its existence is not revealed.
func (s *Server) readAgent(ctx context.Context, c *caller, id string) (*mcpgate.Agent, error) {
	if c.cred.Kind == mcpgate.CredentialAgentKey && c.cred.AgentID != id {
		return nil, notFound("agent", id)
	}
	a, err := s.opts.Store.FindAgent(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.cred.Kind == mcpgate.CredentialAgentKey {
		if err := c.cred.Authorize(&mcpgate.Agent{ID: a.ID, OwnerID: a.OwnerID, MCPEnabled: true}); err != nil {
			return nil, err // a key issued under the agent's previous owner
		}
		return a, nil
	}
	if a.OwnerID != c.user.ID && !c.isAdmin() {
		return nil, notFound("agent", id)
	}
	return a, nil
}

// writeAgent is readAgent for a change: agent keys get EFORBIDDEN before
// anything is looked up.
func (s *Server) writeAgent(ctx context.Context, c *caller, id string) (*mcpgate.Agent, error) {
	if err := c.canWrite(); err != nil {
		return nil, err
	}
	return s.readAgent(ctx, c, id)
}

// changed tells the registry that agents, skills or tools changed, so that
// tools/list shows it at once and open sessions are notified. The change
// is stored already: a failure here is logged, and the registry's periodic
// reload picks the change up.
func (s *Server) changed(ctx context.Context) {
	if s.opts.Changed == nil {
		return
	}
	if err := s.opts.Changed(context.WithoutCancel(ctx)); err != nil {
		s.opts.Logger.Warn("registry reload after a management API change", "err", err)
	}
}
