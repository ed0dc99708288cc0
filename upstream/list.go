package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
)

// listing describes one of the list methods the gateway relays.
type listing struct {
	method string
	field  string // the result's array
	key    string // each item's identifying field
	offers func(c *serverCaps) bool
}

var (
	resourceListing = &listing{
		method: "resources/list", field: "resources", key: "uri",
		offers: func(c *serverCaps) bool { return c != nil && c.Resources != nil },
	}
	templateListing = &listing{
		method: "resources/templates/list", field: "resourceTemplates", key: "uriTemplate",
		offers: func(c *serverCaps) bool { return c != nil && c.Resources != nil },
	}
	promptListing = &listing{
		method: "prompts/list", field: "prompts", key: "name",
		offers: func(c *serverCaps) bool { return c != nil && c.Prompts != nil },
	}
)

// item is one listed item with the key it is listed under upstream.
type item struct {
	skill string
	key   string
	raw   json.RawMessage
}

// list gathers a listing from every skill of the agent that offers it,
// namespaces the keys two skills share, remembers where each served key
// goes, and returns the result object with every item (no cursor). A skill
// whose upstream is down is left out, unless it is the only one.
func (m *Manager) list(ctx context.Context, agentID string, ls *listing) (json.RawMessage, error) {
	var items []item
	var firstErr error
	links := m.agentLinks(agentID)
	for _, l := range links {
		got, err := l.listItems(ctx, ls)
		if err != nil && err != errNoRelay {
			m.log.Warn("upstream listing failed", "agent", agentID, "skill", l.name(), "method", ls.method, "err", err)
			firstErr = err
		}
		items = append(items, got...)
	}
	if len(links) == 1 && firstErr != nil {
		return nil, firstErr
	}
	served := m.serve(agentID, ls, items)
	return mustJSON(map[string][]json.RawMessage{ls.field: served}), nil
}

// serve names the items for the agent, records their routes, and returns
// them as served.
func (m *Manager) serve(agentID string, ls *listing, items []item) []json.RawMessage {
	owners := map[string]map[string]bool{}
	for _, it := range items {
		if owners[it.key] == nil {
			owners[it.key] = map[string]bool{}
		}
		owners[it.key][it.skill] = true
	}
	names := m.agentNames(agentID)
	names.mu.Lock()
	defer names.mu.Unlock()
	table := make(map[string]route, len(items))
	names.tables[ls.method] = table
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		key, raw := it.key, it.raw
		if len(owners[it.key]) > 1 {
			key = namespaced(ls, it.skill, it.key)
			raw = withField(raw, ls.key, key)
		}
		table[key] = route{skill: it.skill, upstream: it.key}
		out = append(out, raw)
	}
	if ls == templateListing {
		names.templates = templateRoutes(table)
	}
	return out
}

// templateRoutes compiles the served templates that are not namespaced
// (a namespaced URI routes by its skill), the most specific first: the
// longest literal prefix, then in text order. Templates that do not parse
// are left out.
func templateRoutes(table map[string]route) []templateRoute {
	var out []templateRoute
	for served, r := range table {
		if served != r.upstream {
			continue
		}
		t, err := parseTemplate(served)
		if err != nil {
			continue
		}
		out = append(out, templateRoute{tmpl: t, skill: r.skill})
	}
	slices.SortFunc(out, func(a, b templateRoute) int {
		if c := cmp.Compare(b.tmpl.prefix, a.tmpl.prefix); c != 0 {
			return c
		}
		return strings.Compare(a.tmpl.text, b.tmpl.text)
	})
	return out
}

// namespaced is the served key of an item two skills share.
func namespaced(ls *listing, skill, key string) string {
	if ls.key == "name" {
		return skill + "." + key
	}
	return nsScheme + skill + "/" + key
}

// listItems lists every page of one skill's upstream.
func (l *link) listItems(ctx context.Context, ls *listing) ([]item, error) {
	l.mu.Lock()
	caps := l.caps
	l.mu.Unlock()
	if caps != nil && !ls.offers(caps) {
		return nil, errNoRelay
	}
	if items, ok := l.cache.get(ls.method); ok {
		return items, nil
	}
	skill := l.name()
	var items []item
	var ttl time.Duration // the first page's ttlMs, from a stateless upstream
	cursor := ""
	for range maxPages {
		raw, err := l.relayed(ctx, nil, nil, ls.method, cursorParams(cursor), mcpgate.TraceContext{})
		if err != nil {
			return items, err
		}
		var page map[string]json.RawMessage
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil || json.Unmarshal(page[ls.field], &list) != nil {
			return items, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "skill %q: the upstream's %s result is malformed", skill, ls.method)
		}
		for _, r := range list {
			var k map[string]json.RawMessage
			var key string
			if json.Unmarshal(r, &k) == nil && json.Unmarshal(k[ls.key], &key) == nil {
				items = append(items, item{skill: skill, key: key, raw: r})
			}
		}
		if cursor == "" && l.stateless() {
			ttl = pageTTL(page)
		}
		var next string
		_ = json.Unmarshal(page["nextCursor"], &next)
		if next == "" || next == cursor {
			l.cache.put(ls.method, items, ttl)
			return items, nil
		}
		cursor = next
	}
	return items, fmt.Errorf("%s: more than %d pages", ls.method, maxPages)
}

// cursorParams are the params of a listing's page.
func cursorParams(cursor string) json.RawMessage {
	if cursor == "" {
		return json.RawMessage(`{}`)
	}
	return mustJSON(map[string]string{"cursor": cursor})
}
