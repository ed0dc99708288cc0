package oauth

import (
	"encoding/json"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// authMethods returns the client authentication methods the token and
// revocation endpoints accept.
func authMethods() []string {
	return []string{mcpgate.AuthMethodNone, mcpgate.AuthMethodBasic, mcpgate.AuthMethodPost}
}

// serverMetadata is the authorization server metadata (RFC 8414).
type serverMetadata struct {
	Issuer                          string   `json:"issuer"`
	AuthorizationEndpoint           string   `json:"authorization_endpoint"`
	TokenEndpoint                   string   `json:"token_endpoint"`
	RegistrationEndpoint            string   `json:"registration_endpoint"`
	RevocationEndpoint              string   `json:"revocation_endpoint"`
	ScopesSupported                 []string `json:"scopes_supported"`
	ResponseTypesSupported          []string `json:"response_types_supported"`
	ResponseModesSupported          []string `json:"response_modes_supported"`
	GrantTypesSupported             []string `json:"grant_types_supported"`
	TokenAuthMethodsSupported       []string `json:"token_endpoint_auth_methods_supported"`
	RevocationAuthMethodsSupported  []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported   []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupport bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssSupport bool     `json:"authorization_response_iss_parameter_supported"`
	RequestURIParameterSupported    bool     `json:"request_uri_parameter_supported"`
	RequestParameterSupported       bool     `json:"request_parameter_supported"`
}

// resourceMetadata is the protected resource metadata (RFC 9728).
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// handleServerMetadata serves the authorization server metadata at every
// discovery path clients try.
func (s *Server) handleServerMetadata(w http.ResponseWriter, _ *http.Request) {
	writeMetadata(w, &serverMetadata{
		Issuer:                          s.base,
		AuthorizationEndpoint:           s.base + "/oauth/authorize",
		TokenEndpoint:                   s.base + "/oauth/token",
		RegistrationEndpoint:            s.base + "/oauth/register",
		RevocationEndpoint:              s.base + "/oauth/revoke",
		ScopesSupported:                 []string{Scope},
		ResponseTypesSupported:          []string{"code"},
		ResponseModesSupported:          []string{"query"},
		GrantTypesSupported:             []string{"authorization_code", "refresh_token"},
		TokenAuthMethodsSupported:       authMethods(),
		RevocationAuthMethodsSupported:  authMethods(),
		CodeChallengeMethodsSupported:   []string{"S256"},
		ClientIDMetadataDocumentSupport: true,
		AuthorizationResponseIssSupport: true,
	})
}

// handleResourceMetadata serves the protected resource metadata of the
// base URL (every agent) or of one agent's MCP endpoint.
func (s *Server) handleResourceMetadata(w http.ResponseWriter, r *http.Request) {
	resource, name := s.base, "mcpgate: every agent granted"
	if agent := r.PathValue("agent"); agent != "" {
		if !mcpgate.ValidAgentID(agent) {
			writeOAuthError(w, errorf(http.StatusNotFound, "not_found", "no such MCP endpoint"))
			return
		}
		resource, name = s.agentURL(agent), "mcpgate agent "+agent
	}
	writeMetadata(w, &resourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{s.base},
		ScopesSupported:        []string{Scope},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           name,
	})
}

// writeMetadata writes a public, cacheable metadata document.
func writeMetadata(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_ = json.NewEncoder(w).Encode(v)
}
