package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// Error is one problem of a config file, at a line and a field.
type Error struct {
	File string
	// Line is 1-based; 0 when the problem has no line.
	Line int
	// Field is the path of the field, such as
	// "agents[0].skills[1].tools[0].input_schema"; empty for the file
	// itself.
	Field string
	Msg   string
}

// Error returns "FILE:LINE: FIELD: MSG", without the file and line when
// the problem is not in a file (CheckSkill).
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the problem as an EINVALID mcpgate error, so that every
// edge shows it to the user.
func (e *Error) Unwrap() error {
	return &mcpgate.Error{Code: mcpgate.EINVALID, Message: e.Error()}
}

// Errors are the problems found in a config file, in the order of their
// lines.
type Errors []*Error

// Error returns the problems, one per line.
func (l Errors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns all the problems as one EINVALID mcpgate error.
func (l Errors) Unwrap() error {
	return &mcpgate.Error{Code: mcpgate.EINVALID, Message: l.Error()}
}

// sorted returns the problems by line, keeping the order of problems on
// one line.
func (l Errors) sorted() Errors {
	out := slices.Clone(l)
	slices.SortStableFunc(out, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	return out
}

// maxErrors bounds how many problems one load reports.
const maxErrors = 50
