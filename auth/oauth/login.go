package oauth

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// pageForm reads a login or consent form: the authorization request it
// carries, checked again, and its CSRF token. When either is wrong it
// answers the request and reports false.
func (s *Server) pageForm(w http.ResponseWriter, r *http.Request) (*authRequest, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	q, err := url.ParseQuery(r.PostFormValue("request"))
	if err != nil {
		s.renderError(w, http.StatusBadRequest, "This sign-in request is not valid", "the form lost the authorization request")
		return nil, false
	}
	ar, e := s.parseAuthorize(r.Context(), q)
	if e != nil {
		s.refuse(w, r, ar, e)
		return nil, false
	}
	if !s.checkCSRF(r) {
		s.renderError(w, http.StatusForbidden, "This form has expired", "The form's CSRF token is missing or wrong. Start again from the application.")
		return nil, false
	}
	return ar, true
}

// handleLogin takes the login form: on the right password it signs the
// user in and resumes the authorization request, or, for a plain sign-in
// (a return path and no request), goes to the return path.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if r.PostFormValue("request") == "" && r.PostFormValue("return") != "" {
		s.handleSignIn(w, r) // a plain sign-in, for the dashboard
		return
	}
	ar, ok := s.pageForm(w, r)
	if !ok {
		return
	}
	name := strings.TrimSpace(r.PostFormValue("username"))
	page := s.newLoginPage(w, r, ar)
	page.Username = name
	if !s.loginIP.allow(clientAddr(r)) || !s.loginFor.allow(strings.ToLower(name)) {
		page.Error = "Too many sign-in attempts. Wait a minute and try again."
		s.render(w, http.StatusTooManyRequests, "login", page)
		return
	}
	user := s.checkLogin(r.Context(), name, r.PostFormValue("password"))
	if user == nil {
		page.Error = "Wrong user name or password."
		s.render(w, http.StatusUnauthorized, "login", page)
		return
	}
	s.startSession(w, user.ID)
	http.Redirect(w, r, "/oauth/authorize?"+ar.query.Encode(), http.StatusSeeOther)
}

// dummyHash is checked against when the user is unknown or has no
// password, so that a wrong name takes as long as a wrong password.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$bWNwZ2F0ZWR1bW15c2FsdA$Ey0cBMDsKmmjZR9eB1SmhPo3rJ3Qj3dJ1yIzL8CLvZ8"

// checkLogin returns the user whose name and password these are, or nil.
func (s *Server) checkLogin(ctx context.Context, name, password string) *mcpgate.User {
	u, err := s.opts.Store.FindUserByName(ctx, name)
	if err != nil || u.PasswordHash == "" {
		auth.CheckPassword(dummyHash, password)
		if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
			s.opts.Logger.Error("OAuth login", "err", err)
		}
		return nil
	}
	if !auth.CheckPassword(u.PasswordHash, password) {
		return nil
	}
	return u
}
