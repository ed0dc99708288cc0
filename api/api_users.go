package api

import (
	"net/http"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// userView is a user as the API shows it: never the password hash, only
// whether there is a password.
type userView struct {
	*mcpgate.User
	HasPassword bool `json:"has_password"`
}

// newUserView shows u.
func newUserView(u *mcpgate.User) userView {
	return userView{User: u, HasPassword: u.PasswordHash != ""}
}

// userCreate is the body of POST /api/v1/users.
type userCreate struct {
	Name     string `json:"name"`
	Admin    bool   `json:"admin"`
	Password string `json:"password"`
}

// userPatch is the body of PATCH /api/v1/users/{id}: absent fields keep
// their value; a password of "" removes the password.
type userPatch struct {
	Name     *string `json:"name"`
	Admin    *bool   `json:"admin"`
	Password *string `json:"password"`
}

// handleUserList lists every user.
func (s *Server) handleUserList(w http.ResponseWriter, r *http.Request, c *caller) error {
	users, err := s.opts.Store.ListUsers(r.Context())
	if err != nil {
		return err
	}
	views := make([]userView, len(users))
	for i, u := range users {
		views[i] = newUserView(u)
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": views})
	return nil
}

// handleUserCreate creates a user, with a password when one is given.
func (s *Server) handleUserCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in userCreate
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := checkUserName(in.Name); err != nil {
		return err
	}
	u := &mcpgate.User{Name: in.Name, Admin: in.Admin, Source: mcpgate.SourceAPI}
	if in.Password != "" {
		hash, err := hashPassword(in.Password)
		if err != nil {
			return err
		}
		u.PasswordHash = hash
	}
	if err := s.opts.Store.CreateUser(r.Context(), u); err != nil {
		return withField(err, "name")
	}
	writeJSON(w, http.StatusCreated, newUserView(u))
	return nil
}

// handleUserGet shows one user.
func (s *Server) handleUserGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	u, err := s.opts.Store.FindUserByID(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newUserView(u))
	return nil
}

// handleUserPatch renames a user, sets or removes its password, or changes
// its admin flag. An admin cannot take its own admin rights away, so that
// the gateway always keeps one.
func (s *Server) handleUserPatch(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	u, err := s.opts.Store.FindUserByID(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	var in userPatch
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := applyUserPatch(u, &in, c); err != nil {
		return err
	}
	if err := s.opts.Store.UpdateUser(ctx, u); err != nil {
		return withField(err, "name")
	}
	writeJSON(w, http.StatusOK, newUserView(u))
	return nil
}

// applyUserPatch applies a patch to u.
func applyUserPatch(u *mcpgate.User, in *userPatch, c *caller) error {
	if in.Name != nil {
		if err := checkUserName(*in.Name); err != nil {
			return err
		}
		u.Name = *in.Name
	}
	if in.Admin != nil && !*in.Admin && u.ID == c.user.ID {
		return fieldErrorf(mcpgate.EINVALID, "admin", "you cannot take your own admin rights away; ask another admin")
	}
	setIf(&u.Admin, in.Admin)
	switch {
	case in.Password == nil:
	case *in.Password == "":
		u.PasswordHash = ""
	default:
		hash, err := hashPassword(*in.Password)
		if err != nil {
			return err
		}
		u.PasswordHash = hash
	}
	return nil
}

// handleUserDelete deletes a user and its keys, which stop working at
// once; ECONFLICT while it owns agents.
func (s *Server) handleUserDelete(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	id := r.PathValue("id")
	if id == c.user.ID {
		return mcpgate.Errorf(mcpgate.EINVALID, "you cannot delete yourself; ask another admin")
	}
	keys, err := s.opts.Store.ListKeys(ctx, mcpgate.KeyFilter{UserID: id})
	if err != nil {
		return err
	}
	if err := s.opts.Store.DeleteUser(ctx, id); err != nil {
		return err
	}
	s.forget(keys)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// hashPassword checks a password's length and hashes it.
func hashPassword(pw string) (string, error) {
	if len(pw) < auth.MinPasswordLen {
		return "", fieldErrorf(mcpgate.EINVALID, "password", "must have at least %d characters", auth.MinPasswordLen)
	}
	return auth.HashPassword(pw)
}

// checkUserName runs the domain's check of a user name, which the config
// file runs too, so that the API accepts the names the file does.
func checkUserName(name string) error {
	if p := mcpgate.CheckUserName(name); p != nil {
		return fieldErrorf(mcpgate.EINVALID, p.Field, "%s", p.Msg)
	}
	return nil
}
