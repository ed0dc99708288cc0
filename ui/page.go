package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
)

// view is what every page template gets: the layout's fields and the
// page's own Data.
type view struct {
	Title string
	Nav   string // the navigation entry to mark current
	User  *mcpgate.User
	CSRF  string
	Data  any
}

// pageFunc serves one page for the signed-in user: it returns the
// template to render with its view, or an error.
type pageFunc func(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error)

// page serves a GET page: an anonymous browser goes to the login page.
func (h *Handler) page(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := h.user(r)
		if err != nil {
			h.fail(w, r, nil, err)
			return
		}
		if u == nil {
			http.Redirect(w, r, h.loginURL(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		h.serve(w, r, u, f)
	})
}

// form serves a POST: it needs a signed-in user and the form's CSRF token.
func (h *Handler) form(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if !h.opts.Sessions.CheckCSRF(r) {
			h.fail(w, r, nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "This form has expired or came from another site. Load the page again and retry."))
			return
		}
		u, err := h.user(r)
		if err == nil && u == nil {
			err = mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "You are signed out. Sign in and retry.")
		}
		if err != nil {
			h.fail(w, r, nil, err)
			return
		}
		h.serve(w, r, u, f)
	})
}

// serve runs f and renders its page, or its error.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, u *mcpgate.User, f pageFunc) {
	name, v, err := f(w, r, u)
	if err != nil {
		h.fail(w, r, u, err)
		return
	}
	if name == "" {
		return // f redirected
	}
	h.render(w, r, http.StatusOK, name, u, v)
}

// admin lets only admins through.
func (h *Handler) admin(f pageFunc) pageFunc {
	return func(w http.ResponseWriter, r *http.Request, u *mcpgate.User) (string, *view, error) {
		if !u.Admin {
			return "", nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "Only admin users may do this.")
		}
		return f(w, r, u)
	}
}

// user returns the signed-in user, nil when nobody is (or the user was
// deleted since).
func (h *Handler) user(r *http.Request) (*mcpgate.User, error) {
	id := h.opts.Sessions.SessionUser(r)
	if id == "" {
		return nil, nil
	}
	u, err := h.opts.Store.FindUserByID(r.Context(), id)
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return nil, nil
	}
	return u, err
}

// loginURL is the login page that comes back to path.
func (h *Handler) loginURL(path string) string {
	if h.opts.LoginURL == nil {
		return "/oauth/login?return=/ui/"
	}
	return h.opts.LoginURL(path)
}

// render writes a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, u *mcpgate.User, v *view) {
	v.User = u
	if u != nil {
		v.CSRF = h.opts.Sessions.CSRFToken(w, r)
	}
	var buf bytes.Buffer
	if err := h.pages.ExecuteTemplate(&buf, name, v); err != nil {
		h.opts.Logger.Error("render dashboard page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail shows the error page: the error's message when it has a code, a
// generic one (and a log line) otherwise; nothing when the request is
// gone.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, u *mcpgate.User, err error) {
	if r.Context().Err() != nil {
		return // the browser left (a live queue's reload cut short): nobody reads the page
	}
	status, msg := http.StatusInternalServerError, "Something went wrong; the gateway's log has the details."
	var e *mcpgate.Error
	if errors.As(err, &e) && e.Code != mcpgate.EINTERNAL {
		status, msg = mcpgate.HTTPStatus(e.Code), e.Message
	} else {
		h.opts.Logger.Error("dashboard", "path", r.URL.Path, "err", err)
	}
	h.render(w, r, status, "error", u, &view{Title: http.StatusText(status), Data: msg})
}

// redirect answers a form with 303 See Other to path.
func redirect(w http.ResponseWriter, r *http.Request, path string) (string, *view, error) {
	http.Redirect(w, r, path, http.StatusSeeOther)
	return "", nil, nil
}

// changed tells the registry that an agent changed; a failure is logged,
// since the change is stored and the periodic reload picks it up.
func (h *Handler) changed(ctx context.Context) {
	if h.opts.Changed == nil {
		return
	}
	if err := h.opts.Changed(context.WithoutCancel(ctx)); err != nil {
		h.opts.Logger.Warn("registry reload after a dashboard change", "err", err)
	}
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"when": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"at":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"pretty": prettyJSON,
	"caller": callerOf,
}

// prettyJSON indents raw JSON for a <pre>; anything else is shown as is.
func prettyJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
