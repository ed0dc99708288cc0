// Package sdkclient runs e2e's Node scripts built on the official MCP
// TypeScript SDK client (client.mjs and the others) for the end-to-end
// test packages, and holds the report they print.
//
// It is used by tests only, and meets the gateway only over HTTP: it must
// not import any mcpgate package.
package sdkclient

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"
)

// Call is one tools/call of a client.mjs plan.
type Call struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Progress  bool           `json:"progress,omitempty"`
}

// ToolResult is a CallToolResult as the TS SDK returns it.
type ToolResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// Report is what client.mjs prints.
type Report struct {
	Server *struct {
		ProtocolVersion string         `json:"protocolVersion"`
		SessionID       string         `json:"sessionId"`
		ServerInfo      map[string]any `json:"serverInfo"`
		Capabilities    map[string]any `json:"capabilities"`
		Instructions    string         `json:"instructions"`
	} `json:"server"`
	Pages [][]string `json:"pages"`
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  map[string]any  `json:"annotations"`
	} `json:"tools"`
	Calls []struct {
		Name     string           `json:"name"`
		Result   *ToolResult      `json:"result"`
		Error    *Error           `json:"error"`
		Progress []map[string]any `json:"progress"`
	} `json:"calls"`
	SessionDelete any    `json:"sessionDelete"`
	Error         *Error `json:"error"`
}

// Error is an error the TS SDK raised.
type Error struct {
	Stage   string         `json:"stage"`
	Message string         `json:"message"`
	Code    any            `json:"code"`
	Data    map[string]any `json:"data,omitempty"`
}

// Run runs one of the Node scripts in dir with a JSON plan, within
// three minutes, and decodes the last line it prints into report; it
// reports whether the script exited 0, and fails t when it printed no
// report.
func Run(t testing.TB, dir, script string, plan, report any) bool {
	t.Helper()
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, string(b))
	cmd.Dir = dir
	out, err := cmd.Output()
	if jerr := json.Unmarshal(lastLine(out), report); jerr != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s printed no report (%v): %s\n%s", script, jerr, out, stderr)
	}
	return err == nil
}

// lastLine returns the last non-empty line of out.
func lastLine(out []byte) []byte {
	end := len(out)
	for end > 0 && (out[end-1] == '\n' || out[end-1] == '\r') {
		end--
	}
	start := end
	for start > 0 && out[start-1] != '\n' {
		start--
	}
	return out[start:end]
}
