package ui

import (
	"context"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// keysPage is what the keys page shows.
type keysPage struct {
	Keys   []*mcpgate.APIKey
	Agents []*mcpgate.Agent // for the new agent key's choice
	// New is the secret of the key just made, shown this once.
	New     string
	NewHint string
}

// keyList shows the user's keys: its user keys and its agents' keys;
// every key for an admin.
func (h *Handler) keyList(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	p, err := h.keysPage(r.Context(), u)
	if err != nil {
		return "", nil, err
	}
	return "keys", &view{Title: "API keys", Nav: "keys", Data: p}, nil
}

// keysPage gathers the keys page.
func (h *Handler) keysPage(ctx context.Context, u *mcpgate.User) (*keysPage, error) {
	agents, err := h.agents(ctx, u)
	if err != nil {
		return nil, err
	}
	keys, err := h.keys(ctx, u, agents)
	if err != nil {
		return nil, err
	}
	return &keysPage{Keys: keys, Agents: agents}, nil
}

// keys returns the keys u may manage, newest first.
func (h *Handler) keys(ctx context.Context, u *mcpgate.User, agents []*mcpgate.Agent) ([]*mcpgate.APIKey, error) {
	if u.Admin {
		return h.opts.Store.ListKeys(ctx, mcpgate.KeyFilter{})
	}
	return mcpgate.OwnKeys(ctx, h.opts.Store, u.ID, agents)
}

// keyCreate makes a key (field "agent": "" for a user key of the user,
// else an agent key of that agent) and shows its secret once.
func (h *Handler) keyCreate(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	ctx := r.Context()
	name := strings.TrimSpace(r.PostFormValue("name"))
	k, secret := auth.NewKey(mcpgate.KeyUser, u.ID, "", name)
	if id := r.PostFormValue("agent"); id != "" {
		a, err := h.agent(ctx, u, id)
		if err != nil {
			return "", nil, err
		}
		k, secret = auth.NewKey(mcpgate.KeyAgent, a.OwnerID, a.ID, name)
	}
	k.Source = mcpgate.SourceUI
	if err := h.opts.Store.CreateKey(ctx, k); err != nil {
		return "", nil, err
	}
	p, err := h.keysPage(ctx, u)
	if err != nil {
		return "", nil, err
	}
	p.New, p.NewHint = secret, k.Hint
	return "keys", &view{Title: "API keys", Nav: "keys", Data: p}, nil
}

// keyRevoke revokes a key the user may manage; it stops working at once.
func (h *Handler) keyRevoke(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	ctx := r.Context()
	k, err := h.opts.Store.FindKey(ctx, r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	if !h.mayManageKey(ctx, u, k) {
		return "", nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "key %q not found", k.ID)
	}
	if err := h.opts.Store.RevokeKey(ctx, k.ID, h.opts.Now()); err != nil {
		return "", nil, err
	}
	if h.opts.Forget != nil {
		h.opts.Forget(k.Hash)
	}
	return redirect(w, r, "/ui/keys/")
}

// mayManageKey reports whether a key is u's: its own user key, a key of
// one of its agents, or any key for an admin.
func (h *Handler) mayManageKey(ctx context.Context, u *mcpgate.User, k *mcpgate.APIKey) bool {
	switch {
	case u.Admin:
		return true
	case k.Kind == mcpgate.KeyUser:
		return k.UserID == u.ID
	}
	_, err := h.agent(ctx, u, k.AgentID)
	return err == nil
}
