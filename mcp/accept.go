package mcp

import (
	"strconv"
	"strings"
)

// accepts says which reply formats a request's Accept header admits, and
// which one the client prefers.
type accepts struct {
	json, sse bool
	// preferSSE is set when the client ranks text/event-stream above
	// application/json: with a higher q-value or, at equal ones, by listing
	// it first ("text/event-stream, application/json").
	preferSSE bool
}

// wantsSSE reports whether a reply should be an SSE stream from the start:
// the client accepts only SSE, or prefers it. Such a stream opens with its
// priming event (on 2025-11-25), so a client that loses the connection can
// resume it; a JSON reply switches to SSE only when a message must go out
// before the response.
func (a accepts) wantsSSE() bool { return a.sse && (!a.json || a.preferSSE) }

// parseAccept reads Accept header values. No header admits everything, as
// does */*; a media range with q=0 admits nothing.
func parseAccept(values []string) accepts {
	if len(values) == 0 {
		return accepts{json: true, sse: true}
	}
	var r ranking
	for _, v := range values {
		for mr := range strings.SplitSeq(v, ",") {
			r.add(mr)
		}
	}
	return r.accepts()
}

// ranking collects the best q-value of each reply format, and the position
// of the range that gave it.
type ranking struct {
	n             int
	json, sse     float64 // best q-value; 0 when not admitted
	jsonAt, sseAt int
}

// add admits what one media range admits.
func (r *ranking) add(mediaRange string) {
	typ, params, _ := strings.Cut(mediaRange, ";")
	q := quality(params)
	r.n++
	if q <= 0 {
		return
	}
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "*/*":
		r.rankJSON(q)
		r.rankSSE(q)
	case "application/json", "application/*":
		r.rankJSON(q)
	case "text/event-stream", "text/*":
		r.rankSSE(q)
	}
}

func (r *ranking) rankJSON(q float64) {
	if q > r.json {
		r.json, r.jsonAt = q, r.n
	}
}

func (r *ranking) rankSSE(q float64) {
	if q > r.sse {
		r.sse, r.sseAt = q, r.n
	}
}

func (r *ranking) accepts() accepts {
	a := accepts{json: r.json > 0, sse: r.sse > 0}
	a.preferSSE = a.sse && a.json && (r.sse > r.json || (r.sse == r.json && r.sseAt < r.jsonAt))
	return a
}

// quality returns the q-value in media range parameters: 1 when absent or
// malformed, 0 for q=0.
func quality(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || q > 1 {
				return 1
			}
			return q
		}
	}
	return 1
}

// isJSONContent reports whether a Content-Type is application/json.
func isJSONContent(contentType string) bool {
	typ, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(typ), "application/json")
}
