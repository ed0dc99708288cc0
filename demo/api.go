package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxBodyBytes bounds a request body of the demo API.
const maxBodyBytes = 1 << 20

// api serves the demo endpoints.
type api struct {
	dataDir string
	mux     *http.ServeMux
	// routes lists the endpoints route registered, for the error of an
	// unknown path.
	routes []string
}

// NewAPI returns the demo REST API. Its routes are relative to Prefix, so
// the caller mounts it with http.StripPrefix(Prefix, ...). Saved invoices go
// to dataDir/demo-invoices. Every response is JSON; errors are
// {"error": "..."} with a fitting status.
func NewAPI(dataDir string) http.Handler {
	a := &api{dataDir: dataDir, mux: http.NewServeMux()}
	a.route("POST /convert/units", a.handleConvertUnits)
	a.route("GET /convert/currency", a.handleConvertCurrency)
	a.route("GET /weather/{city}", a.handleWeather)
	a.route("POST /invoices/{filename}/csv", a.handleSaveInvoice)
	a.route("GET /invoices", a.handleListInvoices)
	a.route("DELETE /invoices/{filename}", a.handleDeleteInvoice)
	a.mux.HandleFunc("/", serveError(a.handleNoRoute))
	return a.mux
}

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route registers h as an endpoint of the API.
func (a *api) route(pattern string, h handlerFunc) {
	a.routes = append(a.routes, pattern)
	a.mux.HandleFunc(pattern, serveError(h))
}

// serveError returns a handler that runs h and writes any error it returns
// as JSON.
func serveError(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, err)
		}
	}
}

// handleNoRoute answers paths and methods the API does not serve.
func (a *api) handleNoRoute(w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := a.mux.Handler(probe); pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return statusf(http.StatusMethodNotAllowed, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allow, " or "))
	}
	return statusf(http.StatusNotFound, "no endpoint %s %s; the demo API serves %s", r.Method, r.URL.Path, strings.Join(a.routes, ", "))
}

// statusError is an error with the HTTP status it is answered with.
type statusError struct {
	status int
	msg    string
}

// Error returns the message.
func (e *statusError) Error() string { return e.msg }

// statusf returns a statusError with a formatted message.
func statusf(status int, format string, args ...any) error {
	return &statusError{status: status, msg: fmt.Sprintf(format, args...)}
}

// badRequest returns a 400 error with a formatted message.
func badRequest(format string, args ...any) error {
	return statusf(http.StatusBadRequest, format, args...)
}

// writeError answers err as {"error": "..."}; errors without a status are
// internal and their text is not shown.
func writeError(w http.ResponseWriter, err error) {
	var se *statusError
	if !errors.As(err, &se) {
		se = &statusError{status: http.StatusInternalServerError, msg: "internal error"}
	}
	writeJSON(w, se.status, map[string]string{"error": se.msg})
}

// writeJSON writes v as the JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(body, '\n'))
	return err
}

// decodeJSON reads a request body into v, refusing unknown fields and
// trailing data.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	// A JSON content type makes a browser ask (CORS preflight) before a
	// cross-site page can post here, and the gateway's guard says no.
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return statusf(http.StatusUnsupportedMediaType, "send the request body as Content-Type: application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return statusf(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", maxBodyBytes)
		}
		return badRequest("the request body is not valid JSON for this endpoint: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("the request body must hold exactly one JSON object")
	}
	return nil
}
