package mcp

import "strings"

// accepts says which reply formats a request's Accept header admits.
type accepts struct {
	json, sse bool
}

// parseAccept reads Accept header values. No header admits everything, as
// does */*; a media range with q=0 admits nothing.
func parseAccept(values []string) accepts {
	if len(values) == 0 {
		return accepts{json: true, sse: true}
	}
	var a accepts
	for _, v := range values {
		for r := range strings.SplitSeq(v, ",") {
			a.add(r)
		}
	}
	return a
}

// add admits what one media range admits.
func (a *accepts) add(mediaRange string) {
	typ, params, _ := strings.Cut(mediaRange, ";")
	if refused(params) {
		return
	}
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "*/*":
		a.json, a.sse = true, true
	case "application/json", "application/*":
		a.json = true
	case "text/event-stream", "text/*":
		a.sse = true
	}
}

// refused reports whether media range parameters carry q=0.
func refused(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			v = strings.TrimRight(strings.TrimSpace(v), "0")
			return v == "" || v == "0." || v == "0"
		}
	}
	return false
}

// isJSONContent reports whether a Content-Type is application/json.
func isJSONContent(contentType string) bool {
	typ, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(typ), "application/json")
}
