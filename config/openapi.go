package config

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/rest/openapi"
	"go.yaml.in/yaml/v3"
)

// openapiTools fills a rest skill from the OpenAPI document its `openapi`
// field names (a path relative to the config file, or an http(s) URL
// fetched through the SSRF guard): its operations become the tools, its
// servers[0] the base URL unless base_url is set, and its security schemes
// headers unless the file sets the same header. `include` and `exclude`
// pick operations.
func (d *decoder) openapiTools(f *fields, s *mcpgate.Skill, source string, imported *importedFields) []*toolAt {
	at, field := f.keys["openapi"], f.field("openapi")
	imported.failed = true
	if f.has("tools") {
		d.errorf(f.keys["tools"], f.field("tools"), "a skill with openapi gets its tools from the document; remove tools (or make a second skill for hand-written tools)")
		return nil
	}
	res, err := d.importDocument(s, source, d.strings(f, "include"), d.strings(f, "exclude"))
	if err != nil {
		d.errorf(at, field, "%s: %s", source, mcpgate.ErrorMessage(err))
		return nil
	}
	imported.failed, imported.tools = false, true
	if s.BaseURL == "" {
		s.BaseURL, imported.baseURL = res.BaseURL, true
	}
	imported.headers = map[string]bool{}
	for name, v := range res.Headers {
		if _, set := s.Headers[name]; !set {
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers[name], imported.headers[name] = v, true
		}
	}
	s.Tools = res.Tools
	out := make([]*toolAt, len(res.Tools))
	for i, t := range res.Tools {
		out[i] = &toolAt{skill: s, tool: t, at: f}
	}
	return out
}

// importDocument loads, parses and imports an OpenAPI document.
func (d *decoder) importDocument(s *mcpgate.Skill, source string, include, exclude []string) (*openapi.Result, error) {
	lower := strings.ToLower(source)
	isURL := strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")
	path := source
	if !isURL && !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(d.file), path)
	}
	// Load bounds the fetch of a URL with its own timeout.
	data, err := openapi.Load(context.Background(), path, s.AllowPrivate)
	if err != nil {
		return nil, err
	}
	doc, err := openapi.Parse(data)
	if err != nil {
		return nil, err
	}
	opts := &openapi.Options{Skill: s.Name, Include: include, Exclude: exclude, BaseURL: s.BaseURL}
	if isURL {
		opts.SourceURL = source
	}
	return openapi.Import(doc, opts)
}

// strings reads an optional list of strings.
func (d *decoder) strings(f *fields, key string) []string {
	var out []string
	for _, n := range d.seq(f, key) {
		n = resolve(n)
		if n.Kind != yaml.ScalarNode || n.Value == "" {
			d.errorf(n, f.field(key), "must be a list of patterns such as \"get*\" or \"GET /pets/*\"")
			return nil
		}
		out = append(out, n.Value)
	}
	return out
}

// importedFields are the fields of a skill an OpenAPI document gave, whose
// problems are reported at the file's openapi field.
type importedFields struct {
	failed  bool // the import failed (reported): the skill has no tools
	tools   bool
	baseURL bool
	headers map[string]bool
}

// remap moves the problems of imported fields to the openapi field.
func (im *importedFields) remap(problems mcpgate.Problems) mcpgate.Problems {
	var out mcpgate.Problems
	for _, p := range problems {
		name, isHeader := strings.CutPrefix(p.Field, "headers.")
		switch {
		case im.failed && p.Field == "tools":
			continue // the import's failure is reported
		case im.baseURL && p.Field == "base_url":
			p = &mcpgate.Problem{Field: "openapi", Msg: p.Msg}
		case isHeader && im.headers[name]:
			p = &mcpgate.Problem{Field: "openapi." + name, Msg: p.Msg}
		case im.tools && strings.HasPrefix(p.Field, "tools["):
			p = &mcpgate.Problem{Field: "openapi", Msg: p.Field + ": " + p.Msg}
		}
		out = append(out, p)
	}
	return out
}
