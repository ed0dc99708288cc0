package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// showConsent renders the consent page: the client, its redirect URI and
// the user's MCP-enabled agents, the requested one checked.
func (s *Server) showConsent(w http.ResponseWriter, r *http.Request, ar *authRequest, user *mcpgate.User, status int, problem string) {
	agents, err := s.ownedAgents(r.Context(), user.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	page := &consentPage{ClientName: clientName(ar.client), ClientID: ar.client.ID, ClientURI: ar.client.ClientURI,
		RedirectURI: ar.redirectURI, UserName: user.Name, Request: ar.query.Encode(), CSRF: s.csrfToken(w, r), Error: problem}
	found := ar.agentID == ""
	for _, a := range agents {
		if !a.MCPEnabled {
			continue
		}
		found = found || a.ID == ar.agentID
		page.Agents = append(page.Agents, consentAgent{ID: a.ID, Name: a.Name, Description: a.Description, Checked: a.ID == ar.agentID})
	}
	if !found && problem == "" {
		page.Error = fmt.Sprintf("The application asks for agent %q, which is not one of your MCP-enabled agents.", ar.agentID)
	}
	s.render(w, status, "consent", page)
}

// handleConsent takes the consent form: Deny sends access_denied back to
// the client; Allow saves the grant of the agents picked and issues a code.
func (s *Server) handleConsent(w http.ResponseWriter, r *http.Request) {
	ar, ok := s.pageForm(w, r)
	if !ok {
		return
	}
	user := s.currentUser(r)
	if user == nil {
		page := s.newLoginPage(w, r, ar)
		page.Error = "Your sign-in expired; sign in again."
		s.render(w, http.StatusUnauthorized, "login", page)
		return
	}
	if r.PostFormValue("decision") != "allow" {
		s.redirect(w, r, ar, url.Values{"error": {"access_denied"}, "error_description": {"the user denied access"}})
		return
	}
	s.allow(w, r, ar, user)
}

// allow saves the grant of the agents picked and approves the request.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, ar *authRequest, user *mcpgate.User) {
	agents, err := s.ownedAgents(r.Context(), user.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	var picked []string
	for _, a := range agents {
		if a.MCPEnabled && slices.Contains(r.PostForm["agent"], a.ID) {
			picked = append(picked, a.ID)
		}
	}
	switch {
	case len(picked) == 0:
		s.showConsent(w, r, ar, user, http.StatusBadRequest, "Pick at least one agent, or Deny.")
		return
	case ar.agentID != "" && !slices.Contains(picked, ar.agentID):
		s.showConsent(w, r, ar, user, http.StatusBadRequest, fmt.Sprintf("The application connects to agent %q: keep it checked, or Deny.", ar.agentID))
		return
	}
	g := &mcpgate.OAuthGrant{UserID: user.ID, ClientID: ar.client.ID, Agents: picked}
	if err := s.opts.Store.SaveOAuthGrant(r.Context(), g); err != nil {
		s.fail(w, err)
		return
	}
	s.approve(w, r, ar, user, g)
}

// ownedAgents returns the user's agents.
func (s *Server) ownedAgents(ctx context.Context, userID string) ([]*mcpgate.Agent, error) {
	return s.opts.Store.ListAgents(ctx, mcpgate.AgentFilter{OwnerID: userID})
}

// stillOwned returns the agents of ids the user still owns, so that a
// token never outlives its user's ownership of an agent by more than its
// own life.
func (s *Server) stillOwned(ctx context.Context, userID string, ids []string) ([]string, error) {
	agents, err := s.ownedAgents(ctx, userID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range agents {
		if slices.Contains(ids, a.ID) {
			out = append(out, a.ID)
		}
	}
	return out, nil
}

// issueCode starts a token family under the grant and stores a code for
// it: for the agent the resource names, or every agent granted.
func (s *Server) issueCode(ctx context.Context, ar *authRequest, user *mcpgate.User, g *mcpgate.OAuthGrant) (string, error) {
	agents := g.Agents
	if ar.agentID != "" {
		agents = []string{ar.agentID}
	}
	agents, err := s.stillOwned(ctx, user.ID, agents)
	if err != nil {
		return "", err
	}
	f := &mcpgate.OAuthFamily{ID: mcpgate.NewID("fam_"), GrantID: g.ID, ClientID: ar.client.ID, UserID: user.ID}
	if err := s.opts.Store.CreateOAuthFamily(ctx, f); err != nil {
		return "", err
	}
	code, now := randomToken(), s.opts.Now()
	err = s.opts.Store.CreateOAuthCode(ctx, &mcpgate.OAuthCode{
		Hash: auth.HashSecret(code), FamilyID: f.ID, ClientID: ar.client.ID, UserID: user.ID,
		RedirectURI: ar.redirectURI, Challenge: ar.challenge, Resource: ar.resource, Scope: Scope,
		Agents: agents, CreatedAt: now, ExpiresAt: now.Add(s.opts.CodeTTL),
	})
	if err != nil {
		return "", err
	}
	return code, nil
}
