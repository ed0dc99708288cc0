package upstream

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// uriTemplate is an RFC 6570 URI template compiled to tell whether a URI
// is one of its expansions, so that a resource URI can be routed to the
// skill whose upstream lists the template.
//
// Matching follows the expansion rules loosely where they only constrain
// characters (a prefix modifier's length, which characters are
// percent-encoded) and strictly where they decide structure: a variable's
// value never crosses a "/", "?" or "#" except in reserved ({+x}) and
// fragment ({#x}) expansions, a path expansion ({/x,y}) adds at most one
// segment per variable unless one is exploded, and the named expansions
// ({;x}, {?x,y}, {&x}) use only their variables' names unless one is
// exploded.
type uriTemplate struct {
	text   string
	prefix int // length of the literal text before the first expression
	re     *regexp.Regexp
}

// Characters a value outside reserved and fragment expansions never
// holds unencoded, as regular expression classes.
const (
	segmentChars = `[^/?#]*`  // a simple, label or path value
	paramChars   = `[^/?#;]*` // a path-style parameter's value
	queryChars   = `[^/#&]*`  // a query parameter's value
)

// parseTemplate compiles a URI template for matching. An unclosed, empty
// or malformed expression, or one using an operator RFC 6570 reserves for
// future use, is an error.
func parseTemplate(text string) (*uriTemplate, error) {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	prefix := -1
	rest := text
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		if prefix < 0 {
			prefix = len(text) - len(rest) + open
		}
		b.WriteString(regexp.QuoteMeta(rest[:open]))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed expression", text)
		}
		expr, err := expressionPattern(rest[open+1 : open+end])
		if err != nil {
			return nil, fmt.Errorf("uri template %q: %w", text, err)
		}
		b.WriteString(expr)
		rest = rest[open+end+1:]
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("uri template %q: %w", text, err)
	}
	if prefix < 0 {
		prefix = len(text)
	}
	return &uriTemplate{text: text, prefix: prefix, re: re}, nil
}

// match reports whether uri is an expansion of the template.
func (t *uriTemplate) match(uri string) bool { return t.re.MatchString(uri) }

// varspec is one variable of an expression.
type varspec struct {
	name    string
	explode bool
}

// expressionPattern returns the regular expression matching every
// expansion of the expression between braces.
func expressionPattern(expr string) (string, error) {
	op := ""
	if expr != "" && strings.ContainsRune("+#./;?&=,!@|", rune(expr[0])) {
		op, expr = expr[:1], expr[1:]
	}
	if op != "" && strings.Contains("=,!@|", op) {
		return "", fmt.Errorf("operator %q is reserved", op)
	}
	vars, err := parseVarList(expr)
	if err != nil {
		return "", err
	}
	switch op {
	case "+":
		return `.*`, nil
	case "#":
		return `(?:#.*)?`, nil
	case ".":
		return `(?:\.` + segmentChars + `)?`, nil
	case "/":
		return pathPattern(vars), nil
	case ";":
		return `(?:;` + paramNames(vars, `[^/?#;=]+`) + `(?:=` + paramChars + `)?)*`, nil
	case "?":
		piece := paramNames(vars, `[^/#&=]+`) + `=` + queryChars
		return `(?:\?` + piece + `(?:&` + piece + `)*)?`, nil
	case "&":
		return `(?:&` + paramNames(vars, `[^/#&=]+`) + `=` + queryChars + `)*`, nil
	}
	return segmentChars, nil
}

// pathPattern matches a path expansion: one segment per variable at most,
// any number when one is exploded.
func pathPattern(vars []varspec) string {
	segment := `(?:/` + segmentChars + `)`
	for _, v := range vars {
		if v.explode {
			return segment + `*`
		}
	}
	return segment + `{0,` + strconv.Itoa(len(vars)) + `}`
}

// paramNames matches the names a named expansion may use: its variables',
// or any (anyName) when one is exploded, since an exploded associative
// array names its keys.
func paramNames(vars []varspec, anyName string) string {
	quoted := make([]string, 0, len(vars))
	for _, v := range vars {
		if v.explode {
			return anyName
		}
		quoted = append(quoted, regexp.QuoteMeta(v.name))
	}
	return `(?:` + strings.Join(quoted, `|`) + `)`
}

// varName matches a variable name: letters, digits, "_" and
// percent-encoded octets, in dot-separated parts.
var varName = regexp.MustCompile(`^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$`)

// parseVarList reads an expression's comma-separated variables, each
// with an optional prefix (":n") or explode ("*") modifier.
func parseVarList(list string) ([]varspec, error) {
	var vars []varspec
	for spec := range strings.SplitSeq(list, ",") {
		v := varspec{name: spec}
		if name, ok := strings.CutSuffix(spec, "*"); ok {
			v = varspec{name: name, explode: true}
		} else if name, length, ok := strings.Cut(spec, ":"); ok {
			n, err := strconv.Atoi(length)
			if err != nil || n < 1 || n > 9999 || length[0] == '+' {
				return nil, fmt.Errorf("variable %q: invalid prefix length", spec)
			}
			v.name = name
		}
		if !varName.MatchString(v.name) {
			return nil, fmt.Errorf("invalid variable %q", spec)
		}
		vars = append(vars, v)
	}
	return vars, nil
}
