package api

import (
	"errors"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/config"
)

// skillError turns the config file's problems with a skill (config.Errors)
// into one EINVALID naming the first problem's field; other errors pass.
func skillError(err error) error {
	var errs config.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return err
	}
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = e.Error()
	}
	return fieldErrorf(mcpgate.EINVALID, errs[0].Field, "%s", strings.Join(lines, "\n"))
}
