package replicas

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"
)

// toolResult is a CallToolResult as the TS SDK returns it.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// clientError is an error the TS SDK raised.
type clientError struct {
	Stage   string         `json:"stage"`
	Message string         `json:"message"`
	Code    any            `json:"code"`
	Data    map[string]any `json:"data"`
}

// clientCall is one tools/call of a client.mjs plan.
type clientCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Progress  bool           `json:"progress,omitempty"`
}

// clientReport is the part of client.mjs's report these tests check.
type clientReport struct {
	Server *struct {
		ProtocolVersion string `json:"protocolVersion"`
		SessionID       string `json:"sessionId"`
	} `json:"server"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Calls []struct {
		Name     string           `json:"name"`
		Result   *toolResult      `json:"result"`
		Error    *clientError     `json:"error"`
		Progress []map[string]any `json:"progress"`
	} `json:"calls"`
	SessionDelete any          `json:"sessionDelete"`
	Error         *clientError `json:"error"`
}

// runNode runs one of e2e's Node scripts with a JSON plan and decodes the
// last line it prints into report; it reports whether the script exited 0.
func runNode(t *testing.T, script string, plan, report any) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, mustJSON(plan))
	cmd.Dir = e2eDir
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

// bearer is the Authorization header of a key.
func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }
