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
	for _, start := range []int{0, 200, 250} {
		var page struct {
			Tools      []struct{ Name string }
			NextCursor string
		}
		b := s.toolsPage(tools, start)
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("page from %d: %v: %s", start, err, b)
		}
		end := min(start+100, 250)
		if len(page.Tools) != end-start || (end < 250) != (page.NextCursor != "") {
			t.Errorf("page from %d: %d tools, cursor %q", start, len(page.Tools), page.NextCursor)
		}
	}
	// Besides the buffer, only the cursor's encoding allocates.
	if n := testing.AllocsPerRun(20, func() { s.toolsPage(tools, 0) }); n > 4 {
		t.Errorf("toolsPage: %v allocations, want at most 4", n)
	}
}
