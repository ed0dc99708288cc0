package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// maxPages bounds how many pages a listing follows, against an upstream
// whose cursors never end.
const maxPages = 1000

// Discover connects to the skill's upstream, lists its tools (every page)
// and disconnects. The tools are named for the skill's prefix as Sync
// would save them. Errors carry EUNAVAILABLE or EINVALID and name the
// skill.
func (m *Manager) Discover(ctx context.Context, sk *mcpgate.Skill) ([]*mcpgate.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, sk.CallTimeout())
	defer cancel()
	s, err := dial(ctx, &dialOptions{skill: sk, m: m, events: &events{
		toolsChanged: func() {}, listChanged: func(string) {}, resourceUpdated: func(string, json.RawMessage) {},
	}})
	if err != nil {
		return nil, err
	}
	defer s.close()
	tools, err := listTools(ctx, s, sk.Prefix)
	if err != nil {
		return nil, unavailable(sk, err)
	}
	return tools, nil
}

// discover lists the pooled session's tools and saves them into the skill.
func (l *link) discover(s *session) {
	sk := l.current()
	ctx, cancel := context.WithTimeout(l.ctx, sk.CallTimeout())
	defer cancel()
	tools, err := listTools(ctx, s, sk.Prefix)
	if err != nil {
		l.health.failed(unavailable(sk, fmt.Errorf("tools/list: %w", err)))
		return
	}
	if err := l.save(ctx, sk, tools); err != nil {
		l.m.log.Error("upstream tools not saved", "agent", sk.AgentID, "skill", sk.Name, "err", err)
		l.health.failed(err)
		return
	}
	l.health.tools(len(tools))
}

// save puts the tools into the stored skill and reports a change.
func (l *link) save(ctx context.Context, sk *mcpgate.Skill, tools []*mcpgate.Tool) error {
	if l.m.skills == nil {
		return nil
	}
	cur, err := l.m.skills.FindSkill(ctx, sk.AgentID, sk.Name)
	if err != nil {
		return fmt.Errorf("find skill: %w", err)
	}
	before := cur.UpdatedAt
	cur.Tools = tools
	if err := l.m.skills.PutSkill(ctx, cur); err != nil {
		return fmt.Errorf("put skill: %w", err)
	}
	if !cur.UpdatedAt.Equal(before) {
		l.setSkill(cur)
		if l.m.changed != nil {
			l.m.changed(ctx)
		}
	}
	return nil
}

// listTools lists every page of the session's tools as gateway tools. A
// tool the gateway cannot serve (no object input schema) is left out.
func listTools(ctx context.Context, s *session, prefix string) ([]*mcpgate.Tool, error) {
	var listed []mcpgate.MCPTool
	cursor := ""
	for range maxPages {
		var page struct {
			Tools      []mcpgate.MCPTool `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		raw, err := s.request(ctx, "tools/list", cursorParams(cursor), nil, "")
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("tools/list result: %w", err)
		}
		listed = append(listed, page.Tools...)
		if page.NextCursor == "" || page.NextCursor == cursor {
			break
		}
		cursor = page.NextCursor
	}
	return gatewayTools(listed, prefix), nil
}

// gatewayTools names the listed tools for the prefix and keeps those the
// gateway can serve.
func gatewayTools(listed []mcpgate.MCPTool, prefix string) []*mcpgate.Tool {
	upstreamNames := make([]string, len(listed))
	for i, t := range listed {
		upstreamNames[i] = t.Name
	}
	names := toolNames(prefix, upstreamNames)
	tools := make([]*mcpgate.Tool, 0, len(listed))
	for i, t := range listed {
		tool := &mcpgate.Tool{
			Name: names[i], Upstream: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: nonNull(t.OutputSchema), Annotations: nonNull(t.Annotations),
			Icons: nonNull(t.Icons), Meta: nonNull(t.Meta),
		}
		if tool.Validate(prefix) == nil {
			tools = append(tools, tool)
		}
	}
	return tools
}

// nonNull drops a JSON null.
func nonNull(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// toolNames returns the names under which upstream tools are served within
// their skill: valid characters only, short enough that with prefix they
// fit mcpgate.MaxToolNameLen, and unique. A name that had to change gets a
// suffix hashed from the upstream name, so the result depends only on the
// names and their order.
func toolNames(prefix string, upstream []string) []string {
	room := mcpgate.MaxToolNameLen - len(prefix)
	used := map[string]bool{}
	out := make([]string, len(upstream))
	for i, name := range upstream {
		n := sanitize(name)
		if n != name || len(n) > room || used[n] {
			n = hashed(n, name, room)
		}
		for k := 2; used[n]; k++ {
			n = hashed(n, fmt.Sprintf("%s#%d", name, k), room)
		}
		used[n] = true
		out[i] = n
	}
	return out
}

// sanitize replaces the characters a tool name may not hold with '_'.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "tool"
	}
	return string(b)
}

// hashed cuts base so that it and an 8-digit hash of seed fit room.
func hashed(base, seed string, room int) string {
	sum := sha256.Sum256([]byte(seed))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if keep := room - len(suffix); keep < len(base) {
		base = base[:max(keep, 0)]
	}
	return base + suffix
}
