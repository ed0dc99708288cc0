package server

import (
	"errors"

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
