package oauth

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
)

//go:embed pages/*.html
var pageFiles embed.FS

// parsePages parses the login, consent and error pages.
func parsePages() *template.Template {
	return template.Must(template.ParseFS(pageFiles, "pages/*.html"))
}

// loginPage is what the login page shows.
type loginPage struct {
	ClientName string
	Request    string // the authorization request's query, to resume it
	Return     string // a plain sign-in's return path, instead of Request
	CSRF       string
	Username   string
	Error      string
}

// newLoginPage returns the login page that resumes the authorization
// request ar once the user signs in.
func (s *Server) newLoginPage(w http.ResponseWriter, r *http.Request, ar *authRequest) *loginPage {
	return &loginPage{ClientName: clientName(ar.client), Request: ar.query.Encode(), CSRF: s.csrfToken(w, r)}
}

// consentPage is what the consent page shows.
type consentPage struct {
	ClientName  string
	ClientID    string
	ClientURI   string
	RedirectURI string
	UserName    string
	Agents      []consentAgent
	Request     string
	CSRF        string
	Error       string
}

// consentAgent is one checkbox of the consent page.
type consentAgent struct {
	ID, Name, Description string
	Checked               bool
}

// errorPage is what the error page shows.
type errorPage struct {
	Title, Message string
}

// render writes one of the pages with the headers every page carries: no
// framing (clickjacking), no caching, no referrer to other sites (the URL
// holds the authorization request) and a policy allowing only the page's
// own style. The referrer policy is same-origin, not no-referrer: with
// no-referrer browsers send "Origin: null" on the page's own forms, which
// the Host/Origin guard refuses.
func (s *Server) render(w http.ResponseWriter, status int, page string, data any) {
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, page, data); err != nil {
		s.opts.Logger.Error("render page", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderError shows the error page.
func (s *Server) renderError(w http.ResponseWriter, status int, title, message string) {
	s.render(w, status, "error", &errorPage{Title: title, Message: message})
}
