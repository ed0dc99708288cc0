package oauth

import (
	"net/http"
	"net/url"
	"strings"
)

// This file is the sign-in the dashboard shares with the authorization
// flow: one login page, one session cookie, one CSRF cookie. A page of
// the dashboard sends an anonymous browser to LoginURL, reads who is
// signed in with SessionUser, guards its forms with CSRFToken and
// CheckCSRF, and signs out with SignOut.

// LoginURL returns the path of the login page that, once the user signs
// in, sends the browser on to returnPath, a path on this gateway.
func LoginURL(returnPath string) string {
	return "/oauth/login?" + url.Values{"return": {returnPath}}.Encode()
}

// SessionUser returns the ID of the user signed in on r's browser, "" when
// nobody is or the session expired. The user may since have been deleted:
// callers look the ID up.
func (s *Server) SessionUser(r *http.Request) string { return s.sessionUserID(r) }

// CSRFToken returns the token a form of r's browser must carry in its
// "csrf" field, setting the browser's CSRF cookie when it has none.
func (s *Server) CSRFToken(w http.ResponseWriter, r *http.Request) string {
	return s.csrfToken(w, r)
}

// CheckCSRF reports whether r's form carries the browser's CSRF token in
// its "csrf" field.
func (s *Server) CheckCSRF(r *http.Request) bool { return s.checkCSRF(r) }

// SignOut ends the browser's session: its cookie expires at once.
func (s *Server) SignOut(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(sessionCookie), Value: "", Path: "/", MaxAge: -1,
		Secure: s.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
}

// returnPath returns p when it is a path on this gateway, and "/ui/"
// otherwise, so that the login page never sends a browser to another
// site ("//host" and "/\host" are other sites to a browser).
func returnPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/ui/"
	}
	return p
}

// handleSignInPage shows the login page of a plain sign-in (GET
// /oauth/login?return=PATH), or sends a signed-in browser on at once.
func (s *Server) handleSignInPage(w http.ResponseWriter, r *http.Request) {
	back := returnPath(r.URL.Query().Get("return"))
	if s.currentUser(r) != nil {
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	s.render(w, http.StatusOK, "login", &loginPage{Return: back, CSRF: s.csrfToken(w, r)})
}

// handleSignIn takes the login form of a plain sign-in: on the right
// password it signs the user in and sends the browser to the return path.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	back := returnPath(r.PostFormValue("return"))
	page := &loginPage{Return: back, CSRF: s.csrfToken(w, r), Username: strings.TrimSpace(r.PostFormValue("username"))}
	if !s.checkCSRF(r) {
		s.renderError(w, http.StatusForbidden, "This form has expired", "The form's CSRF token is missing or wrong. Load the sign-in page again.")
		return
	}
	if !s.loginIP.allow(clientAddr(r)) || !s.loginFor.allow(strings.ToLower(page.Username)) {
		page.Error = "Too many sign-in attempts. Wait a minute and try again."
		s.render(w, http.StatusTooManyRequests, "login", page)
		return
	}
	user := s.checkLogin(r.Context(), page.Username, r.PostFormValue("password"))
	if user == nil {
		page.Error = "Wrong user name or password."
		s.render(w, http.StatusUnauthorized, "login", page)
		return
	}
	s.startSession(w, user.ID)
	http.Redirect(w, r, back, http.StatusSeeOther)
}
