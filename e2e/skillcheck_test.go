package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestSkillChecksAtWriteTime writes skills through the real binary's
// management API (issue 12): a path argument the input schema does not
// require is refused naming the field; a tool posted alone has its
// problems named relative to it; a header whose variable is unset is
// accepted with a warning in the answer, the log and the skill's view.
func TestSkillChecksAtWriteTime(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	g, api, _ := startWithUser(t, nil)
	api.mustDo("POST", "/agents", map[string]any{"id": "shop", "name": "Shop"}, http.StatusCreated, nil)
	type apiError struct {
		Error struct{ Code, Message, Field string }
	}
	var e apiError
	notRequired := catalogSkill("https://api.example.com")
	delete(notRequired["tools"].([]map[string]any)[0]["input_schema"].(map[string]any), "required")
	api.mustDo("POST", "/agents/shop/skills", notRequired, http.StatusBadRequest, &e)
	if e.Error.Field != "tools[0].request.path" || !strings.Contains(e.Error.Message, `add "id" to required`) {
		t.Errorf("a path argument not required: %+v", e.Error)
	}

	skill := catalogSkill("https://api.example.com")
	skill["headers"] = map[string]string{"Authorization": "Bearer ${env:MCPGATE_E2E_UNSET_TOKEN}"}
	var view struct {
		Warnings []struct{ Field, Message string }
	}
	api.mustDo("POST", "/agents/shop/skills", skill, http.StatusCreated, &view)
	if len(view.Warnings) != 1 || view.Warnings[0].Field != "headers.Authorization" ||
		!strings.Contains(view.Warnings[0].Message, "MCPGATE_E2E_UNSET_TOKEN is not set") {
		t.Errorf("warnings of the write = %+v", view.Warnings)
	}
	view.Warnings = nil
	api.mustDo("GET", "/agents/shop/skills/catalog", nil, http.StatusOK, &view)
	if len(view.Warnings) != 1 {
		t.Errorf("warnings of the view = %+v", view.Warnings)
	}
	waitFor(t, g.stderr.String, "MCPGATE_E2E_UNSET_TOKEN") // the log line

	e = apiError{}
	tool := map[string]any{"name": "t", "input_schema": map[string]any{"type": "object"}, "request": map[string]any{"method": "FETCH", "path": "/"}}
	api.mustDo("POST", "/agents/shop/skills/catalog/tools", tool, http.StatusBadRequest, &e)
	if e.Error.Field != "request.method" {
		t.Errorf("a bad method of a tool posted alone: %+v", e.Error)
	}
}
