package api

import (
	_ "embed"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// apiPrefix is where the management API is served.
const apiPrefix = "/api/v1"

// apiHandler serves one management API request. A returned error is
// written by writeAPIError, the one place that maps errors to HTTP.
type apiHandler func(w http.ResponseWriter, r *http.Request) error

// apiRoute is one route of the management API.
type apiRoute struct {
	Method string
	// Path is the mux pattern's path, with {name} wildcards, as the OpenAPI
	// document writes it.
	Path string
	h    apiHandler
}

// Pattern returns the route's ServeMux pattern.
func (rt apiRoute) Pattern() string { return rt.Method + " " + rt.Path }

// apiRouteTable is the management API's route table: every route is here
// and nowhere else, so that a test can hold it against the OpenAPI
// document.
func (s *Server) apiRouteTable() []apiRoute {
	const agent, skill, tool = apiPrefix + "/agents/{id}", apiPrefix + "/agents/{id}/skills/{skill}", apiPrefix + "/agents/{id}/skills/{skill}/tools/{tool}"
	return []apiRoute{
		{"GET", apiPrefix + "/openapi.json", handleOpenAPI},
		{"GET", apiPrefix + "/agents", s.authed(s.handleAgentList)},
		{"POST", apiPrefix + "/agents", s.authed(s.handleAgentCreate)},
		{"GET", agent, s.authed(s.handleAgentGet)},
		{"PATCH", agent, s.authed(s.handleAgentPatch)},
		{"DELETE", agent, s.authed(s.handleAgentDelete)},
		{"GET", agent + "/skills", s.authed(s.handleSkillList)},
		{"POST", agent + "/skills", s.authed(s.handleSkillCreate)},
		{"GET", skill, s.authed(s.handleSkillGet)},
		{"PUT", skill, s.authed(s.handleSkillPut)},
		{"DELETE", skill, s.authed(s.handleSkillDelete)},
		{"POST", skill + "/import", s.authed(s.handleSkillImport)},
		{"GET", skill + "/tools", s.authed(s.handleToolList)},
		{"POST", skill + "/tools", s.authed(s.handleToolCreate)},
		{"GET", tool, s.authed(s.handleToolGet)},
		{"PUT", tool, s.authed(s.handleToolPut)},
		{"DELETE", tool, s.authed(s.handleToolDelete)},
		{"GET", apiPrefix + "/keys", s.authed(s.handleKeyList)},
		{"POST", apiPrefix + "/keys", s.authed(s.handleKeyCreate)},
		{"GET", apiPrefix + "/keys/{id}", s.authed(s.handleKeyGet)},
		{"PATCH", apiPrefix + "/keys/{id}", s.authed(s.handleKeyPatch)},
		{"DELETE", apiPrefix + "/keys/{id}", s.authed(s.handleKeyRevoke)},
		{"GET", apiPrefix + "/users", s.admin(s.handleUserList)},
		{"POST", apiPrefix + "/users", s.admin(s.handleUserCreate)},
		{"GET", apiPrefix + "/users/{id}", s.admin(s.handleUserGet)},
		{"PATCH", apiPrefix + "/users/{id}", s.admin(s.handleUserPatch)},
		{"DELETE", apiPrefix + "/users/{id}", s.admin(s.handleUserDelete)},
		{"GET", apiPrefix + "/agent/inbox", s.worker(s.handleInbox)},
		{"POST", apiPrefix + "/agent/inbox/ack", s.worker(s.handleInboxAck)},
		{"POST", apiPrefix + "/channels/{id}/messages", s.worker(s.handleMessagePost)},
		{"GET", apiPrefix + "/channels/{id}/messages", s.authed(s.handleMessageList)},
		{"GET", apiPrefix + "/calls", s.authed(s.handleCallList)},
		{"GET", apiPrefix + "/calls/{id}", s.authed(s.handleCallGet)},
		{"GET", apiPrefix + "/approvals", s.authed(s.handleApprovalList)},
		{"POST", apiPrefix + "/approvals/{id}/approve", s.authed(s.handleApprovalApprove)},
		{"POST", apiPrefix + "/approvals/{id}/reject", s.authed(s.handleApprovalReject)},
		{"POST", agent + "/tasks", s.authed(s.handleTaskCreate)},
		{"GET", apiPrefix + "/tasks", s.authed(s.handleTaskList)},
		{"GET", apiPrefix + "/tasks/{id}", s.authed(s.handleTaskGet)},
		{"POST", apiPrefix + "/tasks/{id}/cancel", s.authed(s.handleTaskCancel)},
		{"POST", apiPrefix + "/files/presign-upload", s.authed(s.handleFilePresign)},
		{"GET", apiPrefix + "/files/{id}", s.authed(s.handleFileGet)},
		{"PUT", apiPrefix + "/files/{id}/content", s.handleFileUpload},
		{"GET", apiPrefix + "/files/{id}/content", s.handleFileDownload},
		{"GET", apiPrefix + "/webhooks", s.authed(s.handleWebhookList)},
		{"POST", apiPrefix + "/webhooks", s.authed(s.handleWebhookCreate)},
		{"GET", apiPrefix + "/webhooks/{id}", s.authed(s.handleWebhookGet)},
		{"DELETE", apiPrefix + "/webhooks/{id}", s.authed(s.handleWebhookDelete)},
		{"GET", apiPrefix + "/webhooks/{id}/deliveries", s.authed(s.handleDeliveryList)},
		{"POST", apiPrefix + "/webhooks/{id}/deliveries/{delivery}/redeliver", s.authed(s.handleRedeliver)},
	}
}

// apiRoutes registers the management API's routes, and for any other path
// under /api/v1 handleAPIUnknown.
func (s *Server) apiRoutes() {
	for _, rt := range s.apiRouteTable() {
		s.mux.Handle(rt.Pattern(), s.serveAPI(rt.h))
	}
	s.mux.Handle(apiPrefix+"/", s.serveAPI(s.handleAPIUnknown))
}

// serveAPI adapts an apiHandler to net/http.
func (s *Server) serveAPI(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeAPIError(w, r, err)
		}
	})
}

// handleAPIUnknown answers a path under /api/v1 that no route serves: 405
// with Allow when the path is served with other methods, else 404.
func (s *Server) handleAPIUnknown(w http.ResponseWriter, r *http.Request) error {
	var allowed []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); strings.HasPrefix(pattern, m+" ") {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 {
		return fieldErrorf(mcpgate.ENOTFOUND, "", "no management API route is %s; see %s/openapi.json", r.URL.Path, apiPrefix)
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	return &apiError{Err: mcpgate.Errorf(mcpgate.EINVALID, "%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allowed, ", ")), Status: http.StatusMethodNotAllowed}
}

// openAPIDocument describes every route of the management API.
//
//go:embed openapi.json
var openAPIDocument []byte

// handleOpenAPI serves the OpenAPI document. It needs no credential: it
// describes the API, not anyone's data.
func handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, err := w.Write(openAPIDocument)
	return err
}
