package skilledit

import (
	"context"

	"github.com/mcpgate/mcpgate"
)

// Editor applies edits to the skills of one store, for callers that hold
// an editor rather than the whole store (the management API).
type Editor struct {
	Store mcpgate.Store
}

// Apply is Apply on the editor's store.
func (e Editor) Apply(ctx context.Context, agentID, name, source string, edit Edit) (*mcpgate.Skill, error) {
	return Apply(ctx, e.Store, agentID, name, source, edit)
}
