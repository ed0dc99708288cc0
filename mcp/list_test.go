package mcp

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestToolsPageOneBuffer: a page of tools/list is encoded into a buffer
// sized once (it used to grow by doubling, copying the page each time),
// and is the JSON of its tools and the next cursor.
func TestToolsPageOneBuffer(t *testing.T) {
	s := &Server{pageSize: 100}
	var tools []ListedTool
	for i := range 250 {
		name := fmt.Sprintf("tool_%03d", i)
		tools = append(tools, ListedTool{Name: name, JSON: json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"Tool %d.","inputSchema":{"type":"object"}}`, name, i))})
	}
	for _, c := range []struct {
		start int
		tasks bool
	}{{0, false}, {200, false}, {250, false}, {0, true}} {
		start := c.start
		var page struct {
			Tools []struct {
				Name      string
				Execution *struct{ TaskSupport string }
			}
			NextCursor string
		}
		b := s.toolsPage(tools, start, c.tasks)
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("page from %d: %v: %s", start, err, b)
		}
		if c.tasks && page.Tools[0].Execution == nil {
			t.Errorf("page with tasks: %s", b)
		}
		end := min(start+100, 250)
		if len(page.Tools) != end-start || (end < 250) != (page.NextCursor != "") {
			t.Errorf("page from %d: %d tools, cursor %q", start, len(page.Tools), page.NextCursor)
		}
	}
	// Besides the buffer, only the cursor's encoding allocates.
	for _, tasks := range []bool{false, true} {
		if n := testing.AllocsPerRun(20, func() { s.toolsPage(tools, 0, tasks) }); n > 4 {
			t.Errorf("toolsPage (tasks %v): %v allocations, want at most 4", tasks, n)
		}
	}
}
