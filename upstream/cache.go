package upstream

import (
	"encoding/json"
	"sync"
	"time"
)

// listCache keeps a stateless upstream's relayed listings (resources,
// templates, prompts) for as long as their ttlMs says they stay fresh
// (the 2026-07-28 revision's caching hints), so that listings of many
// callers cost the upstream one request per ttl. The gateway is the
// upstream's one client, whichever host asks, so a cacheScope of
// "private" (this client only) allows it too. A list_changed from the
// upstream, or a new session, drops the listing. Upstreams of older
// revisions send no ttlMs and are never cached.
type listCache struct {
	mu      sync.Mutex
	entries map[string]cachedList // by listing method
}

// cachedList is a listing and the end of its freshness.
type cachedList struct {
	items []item
	until time.Time
}

// get returns the fresh listing of method.
func (c *listCache) get(method string) ([]item, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[method]
	if !ok || !time.Now().Before(e.until) {
		return nil, false
	}
	return e.items, true
}

// put keeps a listing for ttl, when ttl is positive.
func (c *listCache) put(method string, items []item, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cachedList{}
	}
	c.entries[method] = cachedList{items: items, until: time.Now().Add(ttl)}
}

// drop forgets the listings of methods, every one when none is named.
func (c *listCache) drop(methods ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(methods) == 0 {
		c.entries = nil
		return
	}
	for _, m := range methods {
		delete(c.entries, m)
	}
}

// pageTTL reads a listing page's ttlMs.
func pageTTL(page map[string]json.RawMessage) time.Duration {
	var ms int64
	if json.Unmarshal(page["ttlMs"], &ms) != nil || ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// changedListings are the listings a list_changed notification makes
// stale.
var changedListings = map[string][]string{
	"notifications/resources/list_changed": {resourceListing.method, templateListing.method},
	"notifications/prompts/list_changed":   {promptListing.method},
}
