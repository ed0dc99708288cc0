package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// TestToolsPageOneBuffer: a page of tools/list is encoded into a buffer
// sized once (it used to grow by doubling, copying the page each time),
// and is the JSON of its tools and the next cursor.
func TestToolsPageOneBuffer(t *testing.T) {
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
		b := toolsPage(tools, start, 100, c.tasks)
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
		if n := testing.AllocsPerRun(20, func() { toolsPage(tools, 0, 100, tasks) }); n > 4 {
			t.Errorf("toolsPage (tasks %v): %v allocations, want at most 4", tasks, n)
		}
	}
}

// TestListToolsKeepsPages: an unchanged listing's pages are encoded once
// and served as the same bytes (each page used to be checked for order and
// encoded again on every request); a new listing from the gateway is
// encoded afresh, and pages from cursors the gateway never handed out are
// served but not kept.
func TestListToolsKeepsPages(t *testing.T) {
	gw := &fakeGateway{}
	s := New(&Options{Sessions: newMemStore(), Gateway: gw, PageSize: 2})
	agent := &mcpgate.Agent{ID: "a1"}
	list := func(params string) []byte {
		t.Helper()
		b, err := s.listTools(context.Background(), agent, json.RawMessage(params), false)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	gw.tools = listedTools("a", "b", "c")
	first := list(`{}`)
	if again := list(`{}`); &again[0] != &first[0] {
		t.Error("the first page of an unchanged listing was encoded again")
	}
	cursor := `{"cursor":"` + encodeCursor("b") + `"}`
	if second := list(cursor); &second[0] != &list(cursor)[0] {
		t.Error("the second page of an unchanged listing was encoded again")
	}
	gw.tools = listedTools("a", "x", "y")
	if changed := list(`{}`); !strings.Contains(string(changed), `"name":"x"`) {
		t.Errorf("after the listing changed, the first page is %s", changed)
	}
	foreign := `{"cursor":"` + encodeCursor("a") + `"}`
	if b := list(foreign); !strings.Contains(string(b), `"name":"x"`) || &b[0] == &list(foreign)[0] {
		t.Errorf("a page from a foreign cursor: %s, or it was kept", b)
	}
}

// TestListToolsSortsOnce: a listing that is not in name order is sorted
// once, and its pages still follow the names.
func TestListToolsSortsOnce(t *testing.T) {
	gw := &fakeGateway{tools: listedTools("c", "a", "b")}
	s := New(&Options{Sessions: newMemStore(), Gateway: gw, PageSize: 2})
	b, err := s.listTools(context.Background(), &mcpgate.Agent{ID: "a1"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"` + encodeCursor("b") + `"}`
	if string(b) != want {
		t.Errorf("first page %s, want %s", b, want)
	}
}

func listedTools(names ...string) []ListedTool {
	tools := make([]ListedTool, len(names))
	for i, n := range names {
		tools[i] = ListedTool{Name: n, JSON: json.RawMessage(`{"name":"` + n + `"}`)}
	}
	return tools
}

// TestDefaultPageSize: by default an agent's first 1,000 tools come in one
// page, and a longer list goes on behind a cursor.
func TestDefaultPageSize(t *testing.T) {
	var names []string
	for i := range 1001 {
		names = append(names, fmt.Sprintf("tool_%04d", i))
	}
	gw := &fakeGateway{tools: listedTools(names...)}
	s := New(&Options{Sessions: newMemStore(), Gateway: gw})
	var page struct {
		Tools      []struct{ Name string }
		NextCursor string
	}
	params := `{}`
	for _, want := range []int{1000, 1} {
		b, err := s.listTools(context.Background(), &mcpgate.Agent{ID: "a1"}, json.RawMessage(params), false)
		page.NextCursor = ""
		if err := errors.Join(err, json.Unmarshal(b, &page)); err != nil {
			t.Fatal(err)
		}
		if len(page.Tools) != want || (want == 1000) != (page.NextCursor != "") {
			t.Fatalf("a page of %d tools (cursor %q), want %d", len(page.Tools), page.NextCursor, want)
		}
		params = `{"cursor":"` + page.NextCursor + `"}`
	}
	if page.Tools[0].Name != "tool_1000" {
		t.Errorf("the second page holds %q", page.Tools[0].Name)
	}
}
