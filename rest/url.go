package rest

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// splitURL splits an absolute URL into its origin (scheme and authority),
// path and query; a fragment is dropped.
func splitURL(s string) (origin, path, query string) {
	s, _, _ = strings.Cut(s, "#")
	s, query, _ = strings.Cut(s, "?")
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	if i := strings.IndexByte(s[start:], '/'); i >= 0 {
		return s[:start+i], s[start+i:], query
	}
	return s, "", query
}

// joinPath joins a base path and a relative path with one slash.
func joinPath(base, rel string) string {
	if rel == "" {
		return base
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(rel, "/")
}

// buildURL returns the request's URL: Request.URL, or the skill's base URL
// joined with Request.Path, with placeholders filled in the path and the
// query from Request.Query appended.
func (e *expander) buildURL(skill *mcpgate.Skill, req *mcpgate.Request) (string, error) {
	var origin, pathTpl, query string
	switch {
	case req.URL != "":
		origin, pathTpl, query = splitURL(req.URL)
	case skill.BaseURL != "":
		var basePath string
		origin, basePath, query = splitURL(skill.BaseURL)
		pathTpl = joinPath(basePath, req.Path)
	default:
		return "", mcpgate.Errorf(mcpgate.EINVALID, "the tool has no URL: set base_url on the skill or url on the request")
	}
	path, err := e.path(pathTpl)
	if err != nil {
		return "", err
	}
	q, err := e.query(req.Query)
	if err != nil {
		return "", err
	}
	if query = joinQuery(query, q); query != "" {
		return origin + path + "?" + query, nil
	}
	return origin + path, nil
}

// joinQuery joins two encoded queries.
func joinQuery(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "&" + b
}

// redactURL returns s without its query, fragment or user information.
func redactURL(s string) string {
	origin, path, _ := splitURL(s)
	if i := strings.Index(origin, "://"); i >= 0 {
		if at := strings.LastIndexByte(origin[i+3:], '@'); at >= 0 {
			origin = origin[:i+3] + origin[i+3+at+1:]
		}
	}
	return origin + path
}

// displayURL returns u for messages: without user information, query or
// fragment.
func displayURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// path fills each placeholder in tpl with the argument's value escaped by
// url.PathEscape, segment by segment, so that a value can neither add a
// segment nor a query. A segment the values make empty, "." or ".." is
// refused, since servers would read it as a different path.
func (e *expander) path(tpl string) (string, error) {
	if !strings.Contains(tpl, "{") {
		return tpl, nil
	}
	var sb strings.Builder
	sb.Grow(len(tpl) + 16)
	first := true
	for seg := range strings.SplitSeq(tpl, "/") {
		if !first {
			sb.WriteByte('/')
		}
		first = false
		if err := e.segment(&sb, seg); err != nil {
			return "", err
		}
	}
	return sb.String(), nil
}

// segment writes one path segment with its placeholders filled.
func (e *expander) segment(sb *strings.Builder, seg string) error {
	before, name, after, found := cutPlaceholder(seg)
	if !found {
		sb.WriteString(seg)
		return nil
	}
	start, first := sb.Len(), name
	for found {
		sb.WriteString(before)
		e.use(name)
		v, ok := e.args.text(name)
		if !ok {
			return mcpgate.Errorf(mcpgate.EINVALID, "argument %q is required: the request path contains it", name)
		}
		sb.WriteString(url.PathEscape(v))
		before, name, after, found = cutPlaceholder(after)
	}
	sb.WriteString(before)
	if s := sb.String()[start:]; s == "" || s == "." || s == ".." {
		return mcpgate.Errorf(mcpgate.EINVALID, "argument %q: %q cannot be a segment of the request path", first, s)
	}
	return nil
}

// query encodes the query templates: a value of exactly "{name}" takes the
// argument's value, repeated for each element of an array and left out when
// the argument is absent; other values interpolate {name} and secrets.
func (e *expander) query(q map[string]string) (string, error) {
	if len(q) == 0 {
		return "", nil // without sorting no keys, which allocates
	}
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(q)) {
		vals, err := e.queryValues(q[k])
		if err != nil {
			return "", err
		}
		for _, v := range vals {
			if sb.Len() > 0 {
				sb.WriteByte('&')
			}
			sb.WriteString(url.QueryEscape(k))
			sb.WriteByte('=')
			sb.WriteString(url.QueryEscape(v))
		}
	}
	return sb.String(), nil
}

// queryValues returns the values one query template stands for.
func (e *expander) queryValues(tpl string) ([]string, error) {
	if name, ok := wholePlaceholder(tpl); ok {
		e.use(name)
		return e.args.list(name), nil
	}
	v, err := e.text(tpl, true)
	if err != nil {
		return nil, err
	}
	return []string{v}, nil
}
