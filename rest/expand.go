package rest

import (
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// expander fills a call's templates with its arguments and secrets, and
// remembers which arguments it used, so that the body can leave them out.
type expander struct {
	args   args
	lookup mcpgate.LookupFunc
	used   []string
	// secretHeaders names the headers whose values hold secrets.
	secretHeaders []string
}

// use marks an argument as consumed by the path, query or headers.
func (e *expander) use(name string) {
	if !slices.Contains(e.used, name) {
		e.used = append(e.used, name)
	}
}

// text interpolates each {name} in tpl with the argument's text (empty when
// absent), and, when secrets is true, each ${env:NAME} in the literal text
// with the variable's value. Values are inserted once and never scanned
// again, so an argument cannot smuggle in a secret reference.
func (e *expander) text(tpl string, secrets bool) (string, error) {
	if !strings.Contains(tpl, "{") {
		return tpl, nil
	}
	var sb strings.Builder
	for {
		before, name, after, found := cutPlaceholder(tpl)
		if err := e.literal(&sb, before, secrets); err != nil {
			return "", err
		}
		if !found {
			return sb.String(), nil
		}
		e.use(name)
		v, _ := e.args.text(name)
		sb.WriteString(v)
		tpl = after
	}
}

// literal writes a template's literal text, expanding secrets if asked.
func (e *expander) literal(sb *strings.Builder, s string, secrets bool) error {
	if secrets && mcpgate.HasSecretRef(s) {
		v, err := mcpgate.ExpandSecrets(s, e.lookup)
		if err != nil {
			return err
		}
		s = v
	}
	sb.WriteString(s)
	return nil
}
