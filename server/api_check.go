package server

import (
	"errors"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/config"
)

// checkSkill runs the config file's checks on one skill of an agent (see
// config.CheckSkill) and returns EINVALID naming the first problem's field.
func checkSkill(agentID string, s *mcpgate.Skill) error {
	err := config.CheckSkill(agentID, s)
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
