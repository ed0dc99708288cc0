package server

import (
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// MetricsAccess says who may read /metrics on the server's listener.
type MetricsAccess int

// The ways /metrics is served. The zero value is the safe one.
const (
	// MetricsAdmins serves /metrics to administrators' user API keys
	// only: the page names every agent and tool.
	MetricsAdmins MetricsAccess = iota
	// MetricsOpen serves /metrics to anyone, for a gateway that listens
	// on a loopback address only.
	MetricsOpen
	// MetricsElsewhere does not serve /metrics: a listener of its own
	// serves it.
	MetricsElsewhere
)

// metricsRoute registers /metrics as Options.MetricsAccess says.
func (s *Server) metricsRoute() {
	h := s.opts.Metrics.Handler()
	switch s.opts.MetricsAccess {
	case MetricsElsewhere:
		return
	case MetricsAdmins:
		h = s.adminsOnly(h)
	}
	s.handle("GET /metrics", "metrics", h)
}

// adminsOnly serves h to administrators' user API keys; others get 401
// (no credential, with a challenge) or 403.
func (s *Server) adminsOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.checkAdmin(r); err != nil {
			s.writeMetricsError(w, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// checkAdmin returns EUNAUTHORIZED without a valid credential, and
// EFORBIDDEN unless it is a user API key of an administrator.
func (s *Server) checkAdmin(r *http.Request) error {
	cred, err := s.opts.Auth.Authenticate(r)
	if err != nil {
		return err
	}
	if cred.Kind != mcpgate.CredentialUserKey {
		return mcpgate.Errorf(mcpgate.EFORBIDDEN, "/metrics takes an administrator's user API key (oag_…); or scrape the --metrics-addr listener")
	}
	u, err := s.opts.Store.FindUserByID(r.Context(), cred.UserID)
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		return mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "the API key's user no longer exists")
	} else if err != nil {
		return err
	}
	if !u.Admin {
		return mcpgate.Errorf(mcpgate.EFORBIDDEN, "only administrators may read /metrics; or scrape the --metrics-addr listener")
	}
	return nil
}

// writeMetricsError answers a refused /metrics request with the
// management API's error body; a 401 carries the Bearer challenge, and
// the cause of a 500 is logged rather than shown.
func (s *Server) writeMetricsError(w http.ResponseWriter, err error) {
	code := mcpgate.ErrorCode(err)
	status := mcpgate.HTTPStatus(code)
	msg := mcpgate.ErrorMessage(err)
	if status == http.StatusInternalServerError {
		s.opts.Logger.Error("/metrics access check failed", "err", err)
		code, msg = mcpgate.EINTERNAL, "Internal error; the gateway's log has the details."
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate"`)
	}
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
