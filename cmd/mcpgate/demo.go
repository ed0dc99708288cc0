package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgate/mcpgate/demo"
)

// printDemo prints what a newcomer needs to use the demo agent: its URL,
// the key (only on the run that created it), a curl session and a Claude
// Desktop snippet.
func printDemo(w io.Writer, base string, d *demo.Details) {
	url := base + "/" + d.AgentID + "/mcp"
	key := d.Key
	fmt.Fprintf(w, "\nmcpgate demo is ready.\n\n  MCP URL:  %s\n  Dashboard: %s/ui/ (sign in as %s)\n", url, base, d.UserName)
	fmt.Fprintf(w, "  Approvals: calls of %s wait for your approval at %s/ui/approvals/ (or: mcpgate approvals list)\n", demo.GatedTool, base)
	if key != "" {
		fmt.Fprintf(w, "  API key:  %s\n            (shown only now; make another any time with: mcpgate key create --user %s)\n", key, d.UserName)
	} else {
		key = "<your key>"
		fmt.Fprintf(w, "  API key:  the one printed at first start (%s); make another with: mcpgate key create --user %s\n", d.KeyHint, d.UserName)
	}
	printDemoPassword(w, d)
	fmt.Fprintf(w, "\nList the tools with curl (initialize, then tools/list):\n\n%s\n", curlLines(url, key))
	fmt.Fprintf(w, "\nClaude Desktop (claude_desktop_config.json):\n\n%s\n\n", claudeConfig(url, key))
}

// printDemoPassword says how to sign in as the demo user (an
// administrator) for OAuth: with the password made on this run, shown
// once, or the one shown when it was made.
func printDemoPassword(w io.Writer, d *demo.Details) {
	if d.Password != "" {
		fmt.Fprintf(w, "  Sign in:  user %s, password %s (an administrator; shown only now)\n", d.UserName, d.Password)
	} else {
		fmt.Fprintf(w, "  Sign in:  user %s, with the password printed at first start (an administrator)\n", d.UserName)
	}
	fmt.Fprintf(w, "            set another with: mcpgate user set %s --password-stdin\n", d.UserName)
}

// curlLines is a shell snippet that opens a session and lists tools.
func curlLines(url, key string) string {
	h := `-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'`
	return strings.Join([]string{
		fmt.Sprintf("  KEY=%s", key),
		fmt.Sprintf(`  SID=$(curl -s -D - -o /dev/null %s -H "Authorization: Bearer $KEY" %s -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}' | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}')`, url, h),
		fmt.Sprintf(`  curl -s %s -H "Authorization: Bearer $KEY" -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' %s -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'`, url, h),
	}, "\n")
}

// claudeConfig is a claude_desktop_config.json that reaches the agent
// through the mcp-remote bridge, which passes the key as a header.
func claudeConfig(url, key string) string {
	cfg := map[string]any{"mcpServers": map[string]any{
		"mcpgate-demo": map[string]any{
			"command": "npx",
			"args":    []string{"-y", "mcp-remote", url, "--header", "Authorization:${MCPGATE_KEY}"},
			"env":     map[string]string{"MCPGATE_KEY": "Bearer " + key},
		},
	}}
	b, _ := json.MarshalIndent(cfg, "  ", "  ")
	return "  " + string(b)
}
