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

// grantList shows the OAuth clients the user granted access to its
// agents. Admins see their own grants too: a grant is a user's consent,
// which only that user gives or takes back here.
func (h *Handler) grantList(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	ctx := r.Context()
	grants, err := h.opts.Store.ListOAuthGrants(ctx, u.ID)
	if err != nil {
		return "", nil, err
	}
	rows := make([]grantRow, len(grants))
	for i, g := range grants {
		c, err := h.opts.Store.FindOAuthClient(ctx, g.ClientID)
		if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
			return "", nil, err
		}
		rows[i] = grantRow{OAuthGrant: g, Client: c}
	}
	return "grants", &view{Title: "OAuth clients", Nav: "oauth", Data: rows}, nil
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
