package ui

import (
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// grantRow is one OAuth grant with its client.
type grantRow struct {
	*mcpgate.OAuthGrant
	Client *mcpgate.OAuthClient // nil for a client known by its metadata document
}

// grantsPage is what the OAuth page shows.
type grantsPage struct {
	Grants  []grantRow
	Clients []*mcpgate.OAuthClient // every registered client, for admins
}

// grantList shows the OAuth clients the user granted access to its
// agents, and to admins every registered client. A grant is a user's
// consent, which only that user takes back here; an admin removes a
// client, and with it every grant to it.
func (h *Handler) grantList(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	ctx := r.Context()
	grants, err := h.opts.Store.ListOAuthGrants(ctx, u.ID)
	if err != nil {
		return "", nil, err
	}
	p := &grantsPage{Grants: make([]grantRow, len(grants))}
	for i, g := range grants {
		c, err := h.opts.Store.FindOAuthClient(ctx, g.ClientID)
		if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
			return "", nil, err
		}
		p.Grants[i] = grantRow{OAuthGrant: g, Client: c}
	}
	if u.Admin {
		if p.Clients, err = h.opts.Store.ListOAuthClients(ctx); err != nil {
			return "", nil, err
		}
	}
	return "grants", &view{Title: "OAuth clients", Nav: "oauth", Data: p}, nil
}

// clientDelete removes a registered client (admins only): every grant to
// it goes and its tokens stop working.
func (h *Handler) clientDelete(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	if err := h.opts.Store.DeleteOAuthClient(r.Context(), r.PathValue("id"), h.opts.Now()); err != nil {
		return "", nil, err
	}
	return redirect(w, r, "/ui/oauth/")
}

// grantRevoke takes back one of the user's grants: the client's tokens
// stop working and its next authorization asks for consent again.
func (h *Handler) grantRevoke(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	ctx := r.Context()
	grants, err := h.opts.Store.ListOAuthGrants(ctx, u.ID)
	if err != nil {
		return "", nil, err
	}
	id := r.PathValue("id")
	for _, g := range grants {
		if g.ID == id {
			if err := h.opts.Store.RevokeOAuthGrant(ctx, id, h.opts.Now()); err != nil {
				return "", nil, err
			}
			return redirect(w, r, "/ui/oauth/")
		}
	}
	return "", nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "grant %q not found", id)
}
