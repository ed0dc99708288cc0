package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// cursorPrefix marks our tools/list cursors, so that foreign strings are
// refused rather than misread.
const cursorPrefix = "after:"

// listTools serves one page of tools/list. The cursor names the last tool
// served, so pages stay stable (no repeats, no gaps for tools that remain)
// when the list changes between pages.
func (s *Server) listTools(ctx context.Context, agent *mcpgate.Agent, params json.RawMessage, tasks bool) ([]byte, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	listed, err := s.gateway.ListTools(ctx, agent)
	if err != nil {
		return nil, err
	}
	lp := s.lists.listing(agent.ID, listed)
	tools, start := lp.tools, 0
	if p.Cursor != nil {
		after, ok := decodeCursor(*p.Cursor)
		if !ok {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: unknown tools/list cursor %q", *p.Cursor)
		}
		start = sort.Search(len(tools), func(i int) bool { return tools[i].Name > after })
	}
	return lp.page(start, s.pageSize, tasks), nil
}

// sortedTools returns tools sorted by name. Gateways list them sorted; a
// list that is not gets sorted here, since cursors depend on the order.
func sortedTools(tools []ListedTool) []ListedTool {
	byName := func(a, b ListedTool) int { return strings.Compare(a.Name, b.Name) }
	if slices.IsSortedFunc(tools, byName) {
		return tools
	}
	tools = slices.Clone(tools)
	slices.SortStableFunc(tools, byName)
	return tools
}

// taskSupport is what every tool says of tasks when the tasks utility is
// on: the gateway runs any tool as a task, or not.
const taskSupport = `,"execution":{"taskSupport":"optional"}}`

// toolsPage encodes the page of size tools from start; with tasks, each
// tool says it may run as a task.
func toolsPage(tools []ListedTool, start, size int, tasks bool) []byte {
	end := min(start+size, len(tools))
	b := make([]byte, 0, pageSize(tools, start, end, tasks))
	b = append(b, `{"tools":[`...)
	for i, t := range tools[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		if tasks && len(t.JSON) > 2 {
			b = append(b, t.JSON[:len(t.JSON)-1]...)
			b = append(b, taskSupport...)
		} else {
			b = append(b, t.JSON...)
		}
	}
	b = append(b, ']')
	if end < len(tools) {
		b = append(b, `,"nextCursor":"`...)
		b = append(b, encodeCursor(tools[end-1].Name)...)
		b = append(b, '"')
	}
	return append(b, '}')
}

// pageSize returns the length of the page of tools from start to end
// (with tasks, each saying so), so that it is encoded into one allocation.
func pageSize(tools []ListedTool, start, end int, tasks bool) int {
	size := len(`{"tools":[],"nextCursor":""}`)
	for _, t := range tools[start:end] {
		size += len(t.JSON) + 1
		if tasks {
			size += len(taskSupport)
		}
	}
	if end < len(tools) {
		size += base64.RawURLEncoding.EncodedLen(len(cursorPrefix) + len(tools[end-1].Name))
	}
	return size
}

// encodeCursor returns the opaque cursor for the page after the named tool.
func encodeCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + name))
}

// decodeCursor returns the tool name a cursor holds.
func decodeCursor(cursor string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(string(b), cursorPrefix)
}
