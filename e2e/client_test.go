package e2e

import (
	"testing"

	"github.com/mcpgate/mcpgate/e2e/sdkclient"
)

// clientCall is one tools/call of a client plan.
type clientCall = sdkclient.Call

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
type toolResult = sdkclient.ToolResult

// clientReport is what client.mjs prints.
type clientReport = sdkclient.Report

// clientError is an error the TS SDK raised.
type clientError = sdkclient.Error

// runClient runs the TS SDK client with a plan and returns its report
// and whether it exited 0.
func runClient(t *testing.T, plan clientPlan) (*clientReport, bool) {
	t.Helper()
	var rep clientReport
	ok := sdkclient.Run(t, ".", "client.mjs", plan, &rep)
	return &rep, ok
}
