package oauth

import (
	"encoding/json"
	"net/http"
)

// oauthError is an OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2).
type oauthError struct {
	Status      int    `json:"-"`
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// Error returns the code and description.
func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

// errorf returns an OAuth error with a status, a code and a description.
func errorf(status int, code, description string) *oauthError {
	return &oauthError{Status: status, Code: code, Description: description}
}

// writeOAuthError writes e as JSON. invalid_client answered with 401 also
// carries a Basic challenge, as RFC 6749 asks.
func writeOAuthError(w http.ResponseWriter, e *oauthError) {
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="mcpgate"`)
	}
	writeJSONStatus(w, e.Status, e)
}

// writeJSONStatus writes v as an uncacheable JSON response.
func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
