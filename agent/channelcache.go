package agent

import (
	"sync"

	"github.com/mcpgate/mcpgate"
)

// maxCachedChannels bounds the channel cache: past it, the cache starts
// over empty (a session's next call reads its channel once more).
const maxCachedChannels = 10000

// channelCache remembers the session channels this backend has found or
// created, so that a session's calls after its first need no read of the
// channel: a channel's agent, skill and owner never change, and channels
// are deleted only with their agent, which a post to a cached channel
// finds (ENOTFOUND; CallTool then forgets it and opens it anew). Only
// session channels are kept: their ID derives from the session, so no
// other caller can create one of that ID after the agent is deleted and
// made anew, as one could with a context_id.
type channelCache struct {
	mu   sync.Mutex
	byID map[string]*mcpgate.Channel
}

// find returns the cached channel with the ID, or nil.
func (c *channelCache) find(id string) *mcpgate.Channel {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

// keep caches ch.
func (c *channelCache) keep(ch *mcpgate.Channel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil || len(c.byID) >= maxCachedChannels {
		c.byID = map[string]*mcpgate.Channel{}
	}
	c.byID[ch.ID] = ch
}

// forget drops the channel with the ID.
func (c *channelCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, id)
}
