package rest

import (
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// headers returns the skill's headers overridden by the tool's, each value
// with its arguments and secrets filled in. A value of exactly "{name}" is
// left out when the argument is absent. A value with a line break or
// another control character is refused, so an argument cannot add headers.
func (e *expander) headers(skill, tool map[string]string) (http.Header, error) {
	h := make(http.Header, len(skill)+len(tool)+3)
	for _, m := range []map[string]string{skill, tool} {
		for name, tpl := range m {
			if err := e.header(h, name, tpl); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// header sets one header from its template.
func (e *expander) header(h http.Header, name, tpl string) error {
	if !ValidToken(name) {
		return mcpgate.Errorf(mcpgate.EINVALID, "header name %q is not valid", name)
	}
	if arg, ok := wholePlaceholder(tpl); ok {
		if _, present := e.args.value(arg); !present {
			e.use(arg)
			h.Del(name)
			return nil
		}
	}
	v, err := e.text(tpl, true)
	if err != nil {
		return err
	}
	if strings.ContainsFunc(v, isControl) {
		return mcpgate.Errorf(mcpgate.EINVALID, "header %s: the value holds a line break or another control character", name)
	}
	h.Set(name, v)
	if mcpgate.HasSecretRef(tpl) {
		e.secretHeaders = append(e.secretHeaders, name)
	}
	return nil
}

// isControl reports whether r may not appear in a header value.
func isControl(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }

// ValidToken reports whether name is an HTTP token (mcpgate.ValidToken).
func ValidToken(name string) bool { return mcpgate.ValidToken(name) }
