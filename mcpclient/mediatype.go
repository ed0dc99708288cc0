package mcpclient

import (
	"mime"
	"strings"
)

// mediaType is the media type of a Content-Type value, lower case and
// without parameters, as mime.ParseMediaType returns it ("" when it does
// not parse). The two a reply has are recognized without its parsing,
// which allocates a map of the parameters on every reply.
func mediaType(v string) string {
	mt, _, _ := strings.Cut(v, ";")
	mt = strings.TrimSpace(mt)
	switch {
	case strings.EqualFold(mt, "text/event-stream"):
		return "text/event-stream"
	case strings.EqualFold(mt, "application/json"):
		return "application/json"
	}
	mt, _, _ = mime.ParseMediaType(v)
	return mt
}
