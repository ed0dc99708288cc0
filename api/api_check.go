package api

import (
	"errors"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// skillError turns a skill's problems (mcpgate.Problems) into one EINVALID
// naming the first problem's field; other errors pass.
func skillError(err error) error {
	var problems mcpgate.Problems
	if !errors.As(err, &problems) || len(problems) == 0 {
		return err
	}
	return fieldErrorf(mcpgate.EINVALID, problems[0].Field, "%s", problems.Error())
}

// relativeTo returns err with the problems of the field at (such as
// "tools[1]") relative to it, as the caller posted that part alone; other
// problems and other errors stay as they are.
func relativeTo(err error, at string) error {
	var problems mcpgate.Problems
	if !errors.As(err, &problems) {
		return err
	}
	out := make(mcpgate.Problems, len(problems))
	for i, p := range problems {
		out[i] = p
		if rel, ok := strings.CutPrefix(p.Field, at); ok && (rel == "" || rel[0] == '.' || rel[0] == '[') {
			out[i] = &mcpgate.Problem{Field: strings.TrimPrefix(rel, "."), Msg: p.Msg}
		}
	}
	return out
}
