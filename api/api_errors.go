package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
)

// apiError is a management API error that says which field of the request
// it is about, or carries an HTTP status no mcpgate code stands for (405).
type apiError struct {
	Err *mcpgate.Error
	// Field names the request field at fault, such as
	// "tools[0].input_schema"; empty when the error is about no one field.
	Field string
	// Status overrides the code's status when set.
	Status int
}

// Error returns the underlying error's text with the field.
func (e *apiError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns the coded error, so that mcpgate.ErrorCode sees its code.
func (e *apiError) Unwrap() error { return e.Err }

// fieldErrorf returns an error with a code about a field of the request.
func fieldErrorf(code, field, format string, args ...any) *apiError {
	return &apiError{Err: mcpgate.Errorf(code, format, args...), Field: field}
}

// withField names the request field that a coded error is about.
func withField(err error, field string) error {
	var e *mcpgate.Error
	if !errors.As(err, &e) {
		return err
	}
	return &apiError{Err: e, Field: field}
}

// apiErrorBody is the body of every management API error.
type apiErrorBody struct {
	Error apiErrorDetail `json:"error"`
}

// apiErrorDetail is the error member of apiErrorBody.
type apiErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// writeAPIError writes err as the management API's error body with its
// status. It is the one place where management API errors become HTTP:
// the status is the one mcp.HTTPStatus gives the error's code (EINVALID
// 400, ENOTFOUND 404, EUNAVAILABLE 503, ...) unless an apiError overrides
// it, and a 500 gets a generic message while its cause is logged.
func (s *Server) writeAPIError(w http.ResponseWriter, r *http.Request, err error) {
	code := mcpgate.ErrorCode(err)
	body := apiErrorBody{Error: apiErrorDetail{Code: code, Message: mcpgate.ErrorMessage(err)}}
	status := mcpgate.HTTPStatus(code)
	var ae *apiError
	if errors.As(err, &ae) {
		body.Error.Field = ae.Field
		if ae.Status != 0 {
			status = ae.Status
		}
	}
	if status == http.StatusInternalServerError {
		s.opts.Logger.Error("management API request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		body.Error = apiErrorDetail{Code: mcpgate.EINTERNAL, Message: "Internal error; the gateway's log has the details."}
	}
	mcp.SetRetryAfter(w, err)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate"`)
	}
	writeJSON(w, status, body)
}

// notFound is ENOTFOUND for a kind of resource and its name.
func notFound(kind, name string) error {
	return mcpgate.Errorf(mcpgate.ENOTFOUND, "%s %q not found", kind, name)
}

// wrapf wraps an internal error with context.
func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, err)...)
}
