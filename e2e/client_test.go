package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"
)

// clientCall is one tools/call of a client plan.
type clientCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Progress  bool           `json:"progress,omitempty"`
}

// clientPlan tells client.mjs what to do.
type clientPlan struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Calls   []clientCall      `json:"calls,omitempty"`
	// TimeoutMs is each request's timeout; 0 means the script's 30 s.
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// Elicitation and Sampling, when set, are the client's answer to
	// every elicitation/create and sampling/createMessage request, and
	// make it declare those capabilities.
	Elicitation any `json:"elicitation,omitempty"`
	Sampling    any `json:"sampling,omitempty"`
}

// toolResult is a CallToolResult as the TS SDK returns it.
type toolResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// clientReport is what client.mjs prints.
type clientReport struct {
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
		Result   *toolResult      `json:"result"`
		Error    *clientError     `json:"error"`
		Progress []map[string]any `json:"progress"`
	} `json:"calls"`
	SessionDelete any          `json:"sessionDelete"`
	Error         *clientError `json:"error"`
}

// clientError is an error the TS SDK raised.
type clientError struct {
	Stage   string `json:"stage"`
	Message string `json:"message"`
	Code    any    `json:"code"`
}

// runClient runs the TS SDK client with a plan and returns its report
// and whether it exited 0.
func runClient(t *testing.T, plan clientPlan) (*clientReport, bool) {
	t.Helper()
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", string(b))
	out, err := cmd.Output()
	var rep clientReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("client.mjs printed no report (%v): %s\n%s", jerr, out, stderr)
	}
	return &rep, err == nil
}
