package mcpgate

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a value a user wrote, at the path of a
// field relative to that value, such as "tools[0].request.method".
type Problem struct {
	Field string
	Msg   string
}

// Error returns "FIELD: MSG", or MSG for a problem of the value itself.
func (p *Problem) Error() string {
	if p.Field == "" {
		return p.Msg
	}
	return p.Field + ": " + p.Msg
}

// Problems are the problems found in one value, in the order found.
type Problems []*Problem

// Addf records a problem of field.
func (l *Problems) Addf(field, format string, args ...any) {
	*l = append(*l, &Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Add records every problem of more with its field under prefix (a field
// path such as "tools[2]"; "" leaves them as they are).
func (l *Problems) Add(prefix string, more Problems) {
	for _, p := range more {
		*l = append(*l, &Problem{Field: JoinField(prefix, p.Field), Msg: p.Msg})
	}
}

// Error returns the problems, one per line.
func (l Problems) Error() string {
	lines := make([]string, len(l))
	for i, p := range l {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns all the problems as one EINVALID error, so that every
// edge shows them to the user.
func (l Problems) Unwrap() error {
	return &Error{Code: EINVALID, Message: l.Error()}
}

// Err returns l as an error, nil when there are none.
func (l Problems) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// JoinField returns the path of field within the value at prefix:
// "tools[0]" and "name" give "tools[0].name", "tools" and "[1]" give
// "tools[1]".
func JoinField(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}
