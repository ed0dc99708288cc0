package api

import (
	"net/http"
	"net/url"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/rest/openapi"
)

// importRequest is the body of POST .../skills/{skill}/import: an OpenAPI
// document by URL or inline, and which of its operations to import.
type importRequest struct {
	// Source is an http(s) URL the gateway fetches the document from.
	Source string `json:"source"`
	// Document is the document itself, JSON or YAML, as a string.
	Document     string   `json:"document"`
	Include      []string `json:"include"`
	Exclude      []string `json:"exclude"`
	BaseURL      string   `json:"base_url"`
	AllowPrivate bool     `json:"allow_private"`
	// Prefix goes before each tool's name, to keep names unique on the
	// agent.
	Prefix string `json:"prefix"`
}

// importResponse is the imported skill, the environment variables its
// secrets need, and what was not imported.
type importResponse struct {
	Skill   *mcpgate.Skill `json:"skill"`
	Secrets []string       `json:"secrets"`
	Skipped []string       `json:"skipped"`
}

// handleSkillImport creates or replaces a rest skill with the tools of an
// OpenAPI document, through the same checks and store calls as every
// other skill write.
func (s *Server) handleSkillImport(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in importRequest
	a, err := s.decodeForAgent(w, r, c, &in)
	if err != nil {
		return err
	}
	data, err := loadDocument(r, &in)
	if err != nil {
		return err
	}
	doc, err := openapi.Parse(data)
	if err != nil {
		return withField(err, documentField(&in))
	}
	name := r.PathValue("skill")
	res, err := openapi.Import(doc, &openapi.Options{Skill: name, Include: in.Include, Exclude: in.Exclude, BaseURL: in.BaseURL, SourceURL: in.Source})
	if err != nil {
		return err
	}
	created := false
	sk, err := s.editSkill(r.Context(), c, a.ID, name, func(cur *mcpgate.Skill) (*mcpgate.Skill, error) {
		created = cur == nil
		sk := res.Skill(a.ID, name)
		sk.Prefix, sk.AllowPrivate = in.Prefix, in.AllowPrivate
		return sk, nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, createdOrOK(created), importResponse{Skill: sk, Secrets: orEmpty(res.Secrets), Skipped: orEmpty(res.Skipped)})
	return nil
}

// loadDocument returns the document inline or fetched from its URL. Only
// http(s) URLs are fetched, through the SSRF guard: the API never reads the
// gateway's own files.
func loadDocument(r *http.Request, in *importRequest) ([]byte, error) {
	switch {
	case (in.Source == "") == (in.Document == ""):
		return nil, fieldErrorf(mcpgate.EINVALID, "source", "give exactly one of source (an http(s) URL) or document (the OpenAPI document as a string)")
	case in.Document != "":
		return []byte(in.Document), nil
	}
	u, err := url.Parse(in.Source)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fieldErrorf(mcpgate.EINVALID, "source", "must be an http or https URL; send a local file's content as document")
	}
	data, err := openapi.Load(r.Context(), in.Source, in.AllowPrivate)
	if err != nil {
		return nil, withField(err, "source")
	}
	return data, nil
}

// documentField is the field a document came in.
func documentField(in *importRequest) string {
	if in.Document != "" {
		return "document"
	}
	return "source"
}

// orEmpty returns a non-nil list, so that JSON shows [] rather than null.
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
