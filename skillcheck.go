package mcpgate

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// MaxResponseBytes caps a skill's max_response_bytes: a response is held
// in memory whole while it becomes a result.
const MaxResponseBytes = 64 << 20

// kindFields are the skill fields that belong to one kind of skill, in the
// order they are reported, with that kind; a field of another kind is
// refused, never ignored.
var kindFields = []struct {
	name string
	kind SkillKind
	set  func(s *Skill) bool
}{
	{"base_url", SkillREST, func(s *Skill) bool { return s.BaseURL != "" }},
	{"url", SkillMCP, func(s *Skill) bool { return s.URL != "" }},
	{"command", SkillMCP, func(s *Skill) bool { return s.Command != "" }},
	{"args", SkillMCP, func(s *Skill) bool { return len(s.Args) > 0 }},
	{"env", SkillMCP, func(s *Skill) bool { return len(s.Env) > 0 }},
	{"cwd", SkillMCP, func(s *Skill) bool { return s.Cwd != "" }},
	{"delivery", SkillAgent, func(s *Skill) bool { return s.Delivery != "" }},
	{"push_url", SkillAgent, func(s *Skill) bool { return s.PushURL != "" }},
	{"push_secret", SkillAgent, func(s *Skill) bool { return s.PushSecret != "" }},
}

// answeredBy says what answers the calls of each kind of skill.
var answeredBy = map[SkillKind]string{
	SkillREST:  "HTTP endpoints",
	SkillMCP:   "upstream MCP server",
	SkillAgent: "agent's workers over the message service",
}

// Check returns every problem of the skill that it can tell alone, with
// fields relative to the skill: its name, kind and policy, the fields of
// its kind, its headers, and each declared tool with its request. What a
// skill binds to outside itself (addresses the SSRF guard allows, request
// templates against the input schema, compiled schemas, name clashes
// with the agent's other skills) is checked elsewhere; whether the
// variables that secrets name are set, by UnsetSecrets.
func (s *Skill) Check() Problems {
	var p Problems
	s.checkOwn(&p)
	if s.Kind != "" && answeredBy[s.Kind] != "" {
		s.checkOtherKinds(&p)
	}
	if s.Prefix != "" && !toolNameChars.MatchString(s.Prefix) {
		p.Addf("prefix", "%q may only hold letters, digits, '_', '.' or '-'", s.Prefix)
	}
	s.checkApproval(&p)
	checkHeaders(&p, "headers", s.Headers)
	switch s.Kind {
	case SkillREST:
		if len(s.Tools) == 0 {
			p.Addf("tools", "a rest skill needs at least one tool, declared under tools: or imported with openapi:")
		}
	case SkillMCP:
		s.checkUpstream(&p)
	case SkillAgent:
		s.checkDelivery(&p)
	}
	if s.Kind == SkillREST || s.Kind == SkillAgent { // an mcp skill's tools are discovered, not declared
		s.checkTools(&p)
	}
	if len(p) == 0 {
		if err := s.Validate(); err != nil {
			p.Addf("", "%s", ErrorMessage(err))
		}
	}
	return p
}

// checkApproval checks the approval policy: a timeout that is not
// negative, approvers named, and each tool's approval override.
func (s *Skill) checkApproval(p *Problems) {
	if s.ApprovalTimeout < 0 {
		p.Addf("approval_timeout", "must not be negative")
	}
	for i, name := range s.Approvers {
		if strings.TrimSpace(name) == "" {
			p.Addf(fmt.Sprintf("approvers[%d]", i), "is empty: name a user")
		}
	}
	for i, t := range s.Tools {
		switch t.Approval {
		case "", ApprovalRequired, ApprovalNever:
		default:
			p.Addf(fmt.Sprintf("tools[%d].approval", i), "%q is not required or never", t.Approval)
		}
	}
	s.checkApprovalMode(p)
}

// checkApprovalMode checks who confirms the skill's gated calls: a known
// mode, and caller only when some call is gated, since it would otherwise
// be a setting that does nothing.
func (s *Skill) checkApprovalMode(p *Problems) {
	switch s.Approval {
	case "", ApprovalReviewers:
	case ApprovalCaller:
		if !s.gatesAny() {
			p.Addf("approval", "caller asks the calling user to confirm calls that need approval, and no tool of this skill needs one: set auto_approve: false (or approval: required on a tool)")
		}
	default:
		p.Addf("approval", "%q is not reviewers or caller", s.Approval)
	}
}

// gatesAny reports whether any call of the skill may need approval.
func (s *Skill) gatesAny() bool {
	if !s.AutoApprove {
		return true
	}
	return slices.ContainsFunc(s.Tools, func(t *Tool) bool { return t != nil && t.Approval == ApprovalRequired })
}

// checkOwn checks the skill's name, its response cap and its kind.
func (s *Skill) checkOwn(p *Problems) {
	switch {
	case s.Name == "":
		p.Addf("name", "is required: the skill's name")
	case !skillNamePattern.MatchString(s.Name):
		p.Addf("name", "skill name %q: use 1 to 64 letters, digits, '_', '.' or '-'", s.Name)
	}
	checkRateLimit(p, s.RateLimit)
	if s.MaxResponseBytes > MaxResponseBytes {
		p.Addf("max_response_bytes", "%d is more than the limit of %d (64 MiB)", s.MaxResponseBytes, MaxResponseBytes)
	}
	switch s.Kind {
	case "":
		p.Addf("kind", "is required: rest, mcp or agent")
	case SkillREST, SkillMCP, SkillAgent:
	default:
		p.Addf("kind", "kind %q is not one of rest, mcp, agent", s.Kind)
	}
}

// checkOtherKinds reports the fields set that belong to a kind of skill
// other than this one's.
func (s *Skill) checkOtherKinds(p *Problems) {
	for _, f := range kindFields {
		if f.kind != s.Kind && f.set(s) {
			p.Addf(f.name, "is a field of kind %s skills; this skill is kind %s", f.kind, s.Kind)
		}
	}
}

// checkUpstream checks an mcp skill's upstream: reached over Streamable
// HTTP (url) or started as a child over stdio (command), not both.
func (s *Skill) checkUpstream(p *Problems) {
	checkEnv(p, s.Env)
	switch {
	case s.URL != "" && s.Command != "":
		p.Addf("command", "set either url (Streamable HTTP) or command (stdio), not both")
	case s.URL != "":
		s.refuseSet(p, "is for stdio upstreams (command)", "args", "env", "cwd")
	case s.Command != "":
		if HasSecretRef(s.Command) {
			p.Addf("command", "%s", NotExpanded)
		}
		if len(s.Headers) > 0 {
			p.Addf("headers", "headers go to Streamable HTTP upstreams (url); pass a stdio upstream its secrets in env")
		}
	default:
		p.Addf("url", "is required: the upstream's Streamable HTTP URL (or command: to start it over stdio)")
	}
}

// refuseSet reports each of the named kind fields that s sets, saying why
// with reason.
func (s *Skill) refuseSet(p *Problems, reason string, names ...string) {
	for _, f := range kindFields {
		if slices.Contains(names, f.name) && f.set(s) {
			p.Addf(f.name, "%s", reason)
		}
	}
}

// checkEnv checks a stdio upstream's environment: names without '=',
// one-line values, and secrets only as ${env:NAME}.
func checkEnv(p *Problems, env map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(env)) {
		v, field := env[name], "env."+name
		switch {
		case name == "" || strings.ContainsAny(name, "=\x00"):
			p.Addf(field, "is not a valid environment variable name")
		case strings.ContainsAny(v, "\x00\r\n"):
			p.Addf(field, "must be one line")
		default:
			checkSecretValue(p, field, name, v)
		}
	}
}

// checkDelivery checks how an agent skill's messages reach its workers.
func (s *Skill) checkDelivery(p *Problems) {
	switch s.Delivery {
	case "", DeliveryPull:
		s.refuseSet(p, "is for delivery: push", "push_url", "push_secret")
	case DeliveryPush:
		s.checkPushTarget(p)
	default:
		p.Addf("delivery", "%q is not pull or push", s.Delivery)
	}
	if len(s.Headers) > 0 {
		p.Addf("headers", "an agent skill sends no HTTP requests of its own; remove headers:")
	}
}

// checkPushTarget checks a push skill's URL (https, or loopback and
// private addresses with allow_private) and its secret reference.
func (s *Skill) checkPushTarget(p *Problems) {
	if s.PushURL == "" {
		p.Addf("push_url", "is required with delivery: push: the https URL envelopes are POSTed to")
	} else if u, err := url.Parse(s.PushURL); err == nil && u.Scheme != "https" && !s.AllowPrivate {
		p.Addf("push_url", "must be https; plain http is allowed only to loopback or private addresses with allow_private: true")
	}
	switch {
	case s.PushSecret == "":
		p.Addf("push_secret", "is required with delivery: push: ${env:NAME} naming the HMAC key that signs each envelope")
	case !IsSecretRef(s.PushSecret):
		p.Addf("push_secret", "write the secret as ${env:NAME}; it is never stored in plain text")
	default:
		checkSecretValue(p, "push_secret", "push_secret", s.PushSecret)
	}
}

// checkHeaders checks header templates: valid names, one line each, and
// secrets only as ${env:NAME}.
func checkHeaders(p *Problems, field string, headers map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		v, hf := headers[name], field+"."+name
		switch {
		case !ValidToken(name):
			p.Addf(hf, "is not a valid header name")
		case strings.ContainsAny(v, "\r\n"):
			p.Addf(hf, "must be one line")
		default:
			checkSecretValue(p, hf, name, v)
		}
	}
}

// checkTools checks each declared tool and that no name repeats.
func (s *Skill) checkTools(p *Problems) {
	first := map[string]int{}
	for i, t := range s.Tools {
		at := fmt.Sprintf("tools[%d]", i)
		p.Add(at, t.Check(s))
		if j, dup := first[t.Name]; dup && t.Name != "" {
			p.Addf(at+".name", "tool %q is declared twice in this skill (first as tools[%d])", t.Name, j)
		} else {
			first[t.Name] = i
		}
	}
}

// Check returns every problem of the tool, as a tool of skill s, that it
// can tell alone, with fields relative to the tool.
func (t *Tool) Check(s *Skill) Problems {
	var p Problems
	switch {
	case t.Name == "":
		p.Addf("name", "is required: the tool's name")
	case ValidToolName(t.Name) != nil:
		p.Addf("name", "%s", ErrorMessage(ValidToolName(t.Name)))
	case len(ExposedName(s.Prefix, t.Name)) > MaxToolNameLen:
		p.Addf("name", "with the skill's prefix, %q is longer than %d characters", ExposedName(s.Prefix, t.Name), MaxToolNameLen)
	}
	checkObjectSchema(&p, "input_schema", t.InputSchema, true)
	checkObjectSchema(&p, "output_schema", t.OutputSchema, false)
	checkAnnotations(&p, t.Annotations)
	checkRateLimit(&p, t.RateLimit)
	switch {
	case s.Kind == SkillREST && t.Request == nil:
		p.Addf("request", "is required: the HTTP request the tool makes (kind rest)")
	case s.Kind == SkillREST:
		p.Add("request", t.Request.Check(s))
	case t.Request != nil:
		p.Addf("request", "only tools of kind rest skills make HTTP requests; kind %s tools are answered by the %s", s.Kind, answeredBy[s.Kind])
	}
	return p
}

// checkObjectSchema checks that raw is a JSON Schema describing an object.
func checkObjectSchema(p *Problems, field string, raw json.RawMessage, required bool) {
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			p.Addf(field, "is required: a JSON Schema with \"type\": \"object\"")
		}
		return
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || top == nil {
		p.Addf(field, "must be a mapping: a JSON Schema with \"type\": \"object\"")
		return
	}
	if string(top["type"]) != `"object"` {
		p.Addf(field, "must have \"type\": \"object\"")
	}
}

// annotationFields are MCP's tool annotations.
var annotationFields = []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}

// checkAnnotations checks a tool's MCP annotations: known names, a text
// title and boolean hints.
func checkAnnotations(p *Problems, raw json.RawMessage) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		p.Addf("annotations", "must be a mapping of %s", strings.Join(annotationFields, ", "))
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, field := m[k], "annotations."+k
		switch {
		case !slices.Contains(annotationFields, k):
			p.Addf("annotations", "unknown field %q; known fields: %s", k, strings.Join(annotationFields, ", "))
		case string(v) == "null":
		case k == "title":
			var s string
			if json.Unmarshal(v, &s) != nil {
				p.Addf(field, "must be a string")
			}
		case string(v) != "true" && string(v) != "false":
			p.Addf(field, "must be true or false, not %q", jsonText(v))
		}
	}
}

// jsonText returns a JSON value as a user wrote it: a string's text, or
// the JSON of anything else.
func jsonText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// methods are the HTTP methods a REST request may use.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Check returns every problem of a REST request template, as a request of
// skill s, that it can tell alone, with fields relative to the request:
// its method, where it goes, and secrets only as ${env:NAME} in headers
// and query values.
func (r *Request) Check(s *Skill) Problems {
	var p Problems
	if m := strings.ToUpper(r.Method); m != "" && !slices.Contains(methods, m) {
		p.Addf("method", "%q is not one of %s", m, strings.Join(methods, ", "))
	}
	r.checkTarget(&p, s)
	for _, name := range slices.Sorted(maps.Keys(r.Query)) {
		checkSecretValue(&p, "query."+name, name, r.Query[name])
	}
	checkHeaders(&p, "headers", r.Headers)
	if b := r.Body; b != nil {
		switch {
		case b.Mode == BodyTemplate && HasSecretRef(string(b.Template)):
			p.Addf("body", "%s", NotExpanded)
		case b.Mode == BodyFields && slices.Contains(b.Fields, ""):
			p.Addf("body", "a body list must hold argument names")
		}
	}
	return p
}

// checkTarget checks where the request goes: a path under the skill's
// base_url, or an absolute url.
func (r *Request) checkTarget(p *Problems, s *Skill) {
	switch {
	case r.URL != "" && r.Path != "":
		p.Addf("url", "set path (under the skill's base_url) or url, not both")
	case r.URL == "" && s.BaseURL == "":
		p.Addf("", "has no target: set base_url on the skill, or url on every tool's request")
	}
	switch {
	case r.Path == "":
	case !strings.HasPrefix(r.Path, "/"):
		p.Addf("path", "%q must start with /", r.Path)
	case strings.ContainsAny(r.Path, "?#"):
		p.Addf("path", "%q must not hold a query or fragment; put query parameters under query", r.Path)
	case HasSecretRef(r.Path):
		p.Addf("path", "%s", NotExpanded)
	}
}

// UnsetSecrets returns a problem for each field of the skill whose
// ${env:NAME} references name a variable lookup does not find. Such a
// skill is valid, but its calls fail until the variable is set.
func (s *Skill) UnsetSecrets(lookup LookupFunc) Problems {
	var p Problems
	for _, f := range s.secretFields() {
		if _, err := ExpandSecrets(f.value, lookup); err != nil && strings.HasSuffix(ErrorMessage(err), " is not set") {
			p.Addf(f.field, "%s", ErrorMessage(err))
		}
	}
	return p
}

// secretField is a field whose ${env:NAME} references are expanded.
type secretField struct{ field, value string }

// secretFields returns the fields of s whose ${env:NAME} references are
// expanded: headers, query values, a stdio upstream's environment and a
// push secret.
func (s *Skill) secretFields() []secretField {
	var out []secretField
	add := func(prefix string, m map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if HasSecretRef(m[k]) {
				out = append(out, secretField{prefix + "." + k, m[k]})
			}
		}
	}
	add("headers", s.Headers)
	add("env", s.Env)
	if HasSecretRef(s.PushSecret) {
		out = append(out, secretField{"push_secret", s.PushSecret})
	}
	for i, t := range s.Tools {
		if t.Request != nil {
			add(fmt.Sprintf("tools[%d].request.query", i), t.Request.Query)
			add(fmt.Sprintf("tools[%d].request.headers", i), t.Request.Headers)
		}
	}
	return out
}

// checkRateLimit checks a skill's or a tool's rate_limit, when it has one.
func checkRateLimit(p *Problems, l *RateLimit) {
	if l == nil {
		return
	}
	if l.PerMinute < 1 {
		p.Addf("rate_limit.per_minute", "must be a positive integer, not %d", l.PerMinute)
	}
	if l.Burst < 1 {
		p.Addf("rate_limit.burst", "must be a positive integer, not %d", l.Burst)
	}
}
