// Package mrtrwire reads and writes the JSON of the 2026-07-28 revision's
// multi-round tool calls (MRTR) for the end-to-end tests that speak it as
// a raw client: the InputRequiredResult, the inputResponses of a retry, a
// complete result's text and a JSON-RPC error.
//
// It is used by tests only, and meets the gateway only over HTTP: it must
// not import any mcpgate package.
package mrtrwire

import (
	"encoding/json"
	"strings"
	"testing"
)

// InputRequired checks that the decoded reply v carries an
// InputRequiredResult and returns its inputRequests and requestState.
func InputRequired(t testing.TB, v map[string]any) (map[string]any, string) {
	t.Helper()
	res, _ := v["result"].(map[string]any)
	reqs, _ := res["inputRequests"].(map[string]any)
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || len(reqs) == 0 || state == "" {
		t.Fatalf("want an InputRequiredResult, got %v", v)
	}
	return reqs, state
}

// Answers returns the members a retry's params add: requestState, and
// inputResponses answering each of reqs with answer[its method].
func Answers(reqs map[string]any, state string, answer map[string]string) string {
	var parts []string
	for k, r := range reqs {
		parts = append(parts, Quote(k)+":"+answer[r.(map[string]any)["method"].(string)])
	}
	return `"requestState":` + Quote(state) + `,"inputResponses":{` + strings.Join(parts, ",") + `}`
}

// CompleteText returns the first text of the complete result in the
// decoded reply v, failing otherwise.
func CompleteText(t testing.TB, v map[string]any) string {
	t.Helper()
	res, _ := v["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if res["resultType"] != "complete" || len(content) == 0 {
		t.Fatalf("want a complete result, got %v", v)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

// RPCError returns the code and message of the JSON-RPC error in the
// decoded reply v, failing when it has none.
func RPCError(t testing.TB, v map[string]any) (int, string) {
	t.Helper()
	e, _ := v["error"].(map[string]any)
	if e == nil {
		t.Fatalf("want an error, got %v", v)
	}
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(code), msg
}

// Quote returns s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
