package mcpgate

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes a user may see. Each edge (the MCP endpoint, the HTTP API, the
// CLI) maps them to its own wire format in exactly one function.
const (
	ECONFLICT     = "conflict"                  // the resource exists, or a name clashes
	EFORBIDDEN    = "forbidden"                 // authenticated, but not allowed
	EINTERNAL     = "internal"                  // a bug or an unexpected failure
	EINVALID      = "invalid"                   // the input is malformed or fails validation
	EINVALIDPARAM = "invalid_param"             // a tools/call parameter the gateway reads itself (attachments) is refused
	ENOTFOUND     = "not_found"                 // the resource does not exist (or is not the caller's)
	ETIMEOUT      = "timeout"                   // a backend did not answer in time
	ETOOLARGE     = "too_large"                 // a body exceeds its limit
	EUNAUTHORIZED = "unauthorized"              // the credential is missing, unknown or expired
	EUNAVAILABLE  = "agent_service_unavailable" // the backend cannot take calls right now
	ERATELIMIT    = "rate_limited"              // the caller must slow down
	ECANCELED     = "canceled"                  // the caller canceled the request
	EMISMATCH     = "idempotency_mismatch"      // an idempotency key was reused for another call
)

// Error is an error with a code and a message meant for the user. Errors
// without a code are internal: their text is logged, never shown.
type Error struct {
	// Code is one of the E* constants.
	Code string
	// Message is safe to show to the caller and says what to do about it.
	Message string
	// RetryAfterMS tells a rate-limited caller when to try again.
	RetryAfterMS int64
}

// Error returns the message with its code.
func (e *Error) Error() string {
	return fmt.Sprintf("mcpgate error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// when there is none, and "" for a nil error.
func ErrorCode(err error) string {
	if err == nil {
		return "" // before e, which escapes: no allocation for no error
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of the first *Error in err's
// chain, and a generic text for internal errors, whose details must not leak.
func ErrorMessage(err error) string {
	if err == nil {
		return "" // before e, which escapes: no allocation for no error
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// HTTPStatus returns the HTTP status for an mcpgate error code: the one
// mapping every HTTP edge of the gateway uses.
func HTTPStatus(code string) int {
	switch code {
	case EUNAUTHORIZED:
		return http.StatusUnauthorized
	case EFORBIDDEN:
		return http.StatusForbidden
	case ENOTFOUND:
		return http.StatusNotFound
	case EINVALID, EINVALIDPARAM:
		return http.StatusBadRequest
	case ECONFLICT:
		return http.StatusConflict
	case EMISMATCH:
		return http.StatusUnprocessableEntity
	case ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case ERATELIMIT:
		return http.StatusTooManyRequests
	case ETIMEOUT:
		return http.StatusGatewayTimeout
	case EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
