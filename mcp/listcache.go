package mcp

import (
	"sync"
)

// listCache keeps each agent's encoded tools/list pages, so that listing an
// unchanged agent neither checks the order of its tools nor encodes a page
// again: every page is the same bytes until the gateway hands out another
// listing. Entries are replaced, never removed; an agent costs one listing
// (a reference to the gateway's own slice) and its pages.
type listCache struct {
	agents sync.Map // agent ID → *listedPages
}

// listedPages is one listing of an agent and its pages encoded so far.
type listedPages struct {
	from  []ListedTool // the gateway's listing these pages come from
	tools []ListedTool // from, sorted by name

	mu    sync.Mutex
	pages map[pageKey][]byte
}

// pageKey names a page: its first tool and whether each tool says it may
// run as a task.
type pageKey struct {
	start int
	tasks bool
}

// listing returns the pages of the agent's listing from. A listing is the
// gateway's slice: the same slice is the same list (Gateway.ListTools
// returns a new slice when the list changes).
func (c *listCache) listing(agentID string, from []ListedTool) *listedPages {
	if v, ok := c.agents.Load(agentID); ok && sameSlice(v.(*listedPages).from, from) {
		return v.(*listedPages)
	}
	lp := &listedPages{from: from, tools: sortedTools(from), pages: make(map[pageKey][]byte)}
	c.agents.Store(agentID, lp)
	return lp
}

// sameSlice reports whether a and b are the same slice: the same length
// over the same array.
func sameSlice(a, b []ListedTool) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// page returns the encoded page from start. Only the pages a client reaches
// by following cursors from the first page (start a multiple of size) are
// kept, so that a client sending cursors of its own cannot make the cache
// hold more than the listing's pages, twice (with and without tasks).
func (lp *listedPages) page(start, size int, tasks bool) []byte {
	if start%size != 0 {
		return toolsPage(lp.tools, start, size, tasks)
	}
	k := pageKey{start, tasks}
	lp.mu.Lock()
	defer lp.mu.Unlock()
	b, ok := lp.pages[k]
	if !ok {
		b = toolsPage(lp.tools, start, size, tasks)
		lp.pages[k] = b
	}
	return b
}
