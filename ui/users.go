package ui

import (
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// userList shows every user (admins only).
func (h *Handler) userList(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	users, err := h.opts.Store.ListUsers(r.Context())
	if err != nil {
		return "", nil, err
	}
	return "users", &view{Title: "Users", Nav: "users", Data: users}, nil
}

// userCreate makes a user with a password (fields name, password, admin).
func (h *Handler) userCreate(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if err := checkUserName(name); err != nil {
		return "", nil, err
	}
	pw := r.PostFormValue("password")
	if len(pw) < auth.MinPasswordLen {
		return "", nil, mcpgate.Errorf(mcpgate.EINVALID, "The password must have at least %d characters.", auth.MinPasswordLen)
	}
	hash, err := auth.HashPassword(pw)
	if err != nil {
		return "", nil, err
	}
	nu := &mcpgate.User{Name: name, PasswordHash: hash, Admin: r.PostFormValue("admin") == "true", Source: mcpgate.SourceUI}
	if err := h.opts.Store.CreateUser(r.Context(), nu); err != nil {
		return "", nil, err
	}
	return redirect(w, r, "/ui/users/")
}

// userAdmin makes a user an admin, or not (field "admin": "true" or
// "false"). An admin cannot demote itself, so that the gateway keeps one.
func (h *Handler) userAdmin(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
	target, err := h.opts.Store.FindUserByID(r.Context(), r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	admin := r.PostFormValue("admin") == "true"
	if target.ID == u.ID && !admin {
		return "", nil, mcpgate.Errorf(mcpgate.EINVALID, "You cannot take away your own admin rights; ask another admin.")
	}
	target.Admin = admin
	if err := h.opts.Store.UpdateUser(r.Context(), target); err != nil {
		return "", nil, err
	}
	return redirect(w, r, "/ui/users/")
}

// checkUserName runs the domain's user name rule, so that the dashboard
// accepts the names the file and the API do.
func checkUserName(name string) error {
	if p := mcpgate.CheckUserName(name); p != nil {
		return mcpgate.Errorf(mcpgate.EINVALID, "User name: %s", p.Msg)
	}
	return nil
}
