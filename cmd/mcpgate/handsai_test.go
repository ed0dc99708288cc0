package main

// End-to-end tests of the HandsAI-compatible surface: a Main serving
// in-process answers each example request of HandsAI's tools/call document
// with the documented response shape, lists the tools of every agent a
// credential may use, and qualifies clashing names as agentId.tool.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// handsAIConfig is the config of the HandsAI tests; HANDSAI_API is replaced
// by the URL of newHandsAIBackend's server. The assistant and crm agents
// both have a tool "status"; the hidden and bobs agents are not alice's to
// use over MCP.
const handsAIConfig = `users:
  - name: alice
  - name: bob
agents:
  - id: assistant
    owner: alice
    mcp_enabled: true
    skills:
      - name: tools
        kind: rest
        base_url: HANDSAI_API
        allow_private: true
        tools:
          - name: weather_get
            description: Current weather at a location.
            input_schema: {type: object, properties: {location: {type: string}, units: {type: string, enum: [celsius, fahrenheit]}}, required: [location]}
            request: {method: GET, path: /weather, query: {location: "{location}", units: "{units}"}}
          - name: search_documents
            description: Search documents.
            input_schema: {type: object, properties: {query: {type: string}, tags: {type: array, items: {type: string}}, limit: {type: integer, minimum: 1}}, required: [query]}
            request: {method: POST, path: /documents/search, body: all}
          - name: database_query
            description: Run a SQL query.
            input_schema: {type: object, properties: {sql: {type: string}}, required: [sql]}
            request: {method: POST, path: /query, body: all, timeout: 200ms}
          - name: send_notification
            description: Notify people.
            input_schema: {type: object, properties: {recipients: {type: array, items: {type: string}}, message: {type: string}, priority: {type: string, enum: [low, normal, high]}}, required: [recipients, message]}
            request: {method: POST, path: /notifications, body: all}
          - name: status
            input_schema: {type: object}
            request: {method: GET, path: /status/assistant}
  - id: crm
    owner: alice
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: HANDSAI_API
        allow_private: true
        tools:
          - name: status
            input_schema: {type: object}
            request: {method: GET, path: /status/crm}
          - name: contacts_list
            input_schema: {type: object}
            request: {method: GET, path: /contacts}
  - id: hidden
    owner: alice
    mcp_enabled: false
    skills:
      - name: api
        kind: rest
        base_url: HANDSAI_API
        allow_private: true
        tools:
          - name: secret_tool
            input_schema: {type: object}
            request: {method: GET, path: /status/hidden}
  - id: bobs
    owner: bob
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: HANDSAI_API
        allow_private: true
        tools:
          - name: weather_get
            input_schema: {type: object, properties: {location: {type: string}}, required: [location]}
            request: {method: GET, path: /status/bobs}
`

// newHandsAIBackend starts the REST API behind the HandsAI tests' tools: it
// answers the document's example requests with the document's data.
func newHandsAIBackend(tb testing.TB) *httptest.Server {
	tb.Helper()
	quit := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /weather", handleWeather)
	mux.HandleFunc("POST /documents/search", handleSearch)
	mux.HandleFunc("POST /query", func(w http.ResponseWriter, r *http.Request) {
		var q struct{ SQL string }
		_ = json.NewDecoder(r.Body).Decode(&q)
		if strings.Contains(q.SQL, "pg_sleep") { // outlasts the tool's timeout
			select {
			case <-r.Context().Done():
			case <-quit:
			}
			return
		}
		http.Error(w, "Connection timeout", http.StatusInternalServerError)
	})
	mux.HandleFunc("POST /notifications", handleNotify)
	mux.HandleFunc("GET /status/{agent}", func(w http.ResponseWriter, r *http.Request) {
		writeTestJSON(w, `{"agent": "`+r.PathValue("agent")+`"}`)
	})
	mux.HandleFunc("GET /contacts", func(w http.ResponseWriter, r *http.Request) { writeTestJSON(w, `[]`) })
	srv := httptest.NewServer(mux)
	tb.Cleanup(func() { close(quit); srv.Close() })
	return srv
}

// handleWeather knows the weather of the document's two examples.
func handleWeather(w http.ResponseWriter, r *http.Request) {
	switch q := r.URL.Query(); q.Get("location") + "/" + q.Get("units") {
	case "San Francisco/celsius":
		writeTestJSON(w, `{"temperature": 18, "condition": "Partly cloudy", "humidity": 65}`)
	case "New York/fahrenheit":
		writeTestJSON(w, `{"temperature": 64, "condition": "Sunny", "humidity": 40}`)
	default:
		http.Error(w, "unknown location "+r.URL.RawQuery, http.StatusNotFound)
	}
}

// handleSearch answers the document's search, checking the array argument
// arrived as an array.
func handleSearch(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Query string
		Tags  []string
		Limit int
	}
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.Query != "quarterly revenue" || !slices.Equal(q.Tags, []string{"finance", "2024"}) || q.Limit != 10 {
		http.Error(w, "unexpected search", http.StatusBadRequest)
		return
	}
	writeTestJSON(w, `[{"id": "doc-1", "title": "Q4 2024 Revenue Report"}, {"id": "doc-2", "title": "Q3 2024 Financial Summary"}]`)
}

// handleNotify answers with what it would send.
func handleNotify(w http.ResponseWriter, r *http.Request) {
	var n struct {
		Recipients []string
		Message    string
		Priority   string
	}
	if err := json.NewDecoder(r.Body).Decode(&n); err != nil || len(n.Recipients) != 2 || n.Message == "" {
		http.Error(w, "unexpected notification", http.StatusBadRequest)
		return
	}
	b, _ := json.Marshal(map[string]any{"sent": len(n.Recipients), "priority": n.Priority})
	writeTestJSON(w, string(b))
}

// writeTestJSON writes a JSON body.
func writeTestJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// mustStartHandsAIGateway starts a Main serving handsAIConfig.
func mustStartHandsAIGateway(tb testing.TB) *testGateway {
	tb.Helper()
	backend := newHandsAIBackend(tb)
	return mustStartMain(tb, strings.ReplaceAll(handsAIConfig, "HANDSAI_API", backend.URL))
}

// handsAIPost sends a JSON-RPC body to one of the surface's endpoints.
func (g *testGateway) handsAIPost(tb testing.TB, endpoint string, h http.Header, body string) *reply {
	tb.Helper()
	return send(tb, http.MethodPost, g.URL()+"/mcp/tools/"+endpoint, with(h, headers("Accept", "application/json")), body)
}

// mustMatchJSON checks that a reply is HTTP 200 with exactly the JSON
// want, field by field. When messagePrefix is set, error.message need only
// start with it (and contain messagePart); want then holds that prefix.
func (r *reply) mustMatchJSON(tb testing.TB, want, messagePrefix, messagePart string) {
	tb.Helper()
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		tb.Errorf("HTTP %d, Content-Type %q; want 200 application/json", r.status, r.header.Get("Content-Type"))
	}
	var w, got map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatalf("want: %v", err)
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		tb.Fatalf("reply is not a JSON object: %v\n%s", err, r.body)
	}
	if e, ok := got["error"].(map[string]any); ok && messagePrefix != "" {
		msg, _ := e["message"].(string)
		if !strings.HasPrefix(msg, messagePrefix) || !strings.Contains(msg, messagePart) {
			tb.Errorf("error.message = %q, want it to start with %q and contain %q", msg, messagePrefix, messagePart)
		}
		e["message"] = messagePrefix
	}
	if diff := cmp.Diff(w, got); diff != "" {
		tb.Errorf("reply (-want +got):\n%s", diff)
	}
}

func TestHandsAIDocumentExamples(t *testing.T) {
	t.Parallel()
	g := mustStartHandsAIGateway(t)
	_, key := g.mustKey(t, "alice", "")
	tests := []struct {
		name, request, want string
		// messagePrefix and messagePart loosen the check of error.message.
		messagePrefix, messagePart string
	}{
		{name: "example 1: weather tool", request: `{
  "jsonrpc": "2.0",
  "method": "tools/call",
  "params": {
    "name": "weather_get",
    "arguments": {
      "location": "San Francisco",
      "units": "celsius"
    }
  },
  "id": "weather-123"
}`, want: `{
  "jsonrpc": "2.0",
  "result": {
    "content": [
      {
        "type": "text",
        "text": "{\"temperature\": 18, \"condition\": \"Partly cloudy\", \"humidity\": 65}"
      }
    ]
  },
  "id": "weather-123"
}`},
		{name: "example 2: document search with array parameter", request: `{
  "jsonrpc": "2.0",
  "method": "tools/call",
  "params": {
    "name": "search_documents",
    "arguments": {
      "query": "quarterly revenue",
      "tags": ["finance", "2024"],
      "limit": 10
    }
  },
  "id": "search-456"
}`, want: `{
  "jsonrpc": "2.0",
  "result": {
    "content": [
      {
        "type": "text",
        "text": "[{\"id\": \"doc-1\", \"title\": \"Q4 2024 Revenue Report\"}, {\"id\": \"doc-2\", \"title\": \"Q3 2024 Financial Summary\"}]"
      }
    ]
  },
  "id": "search-456"
}`},
		{name: "example 3: invalid parameters", request: `{
  "jsonrpc": "2.0",
  "method": "tools/call",
  "params": {
    "name": "weather_get",
    "arguments": {
      "units": "celsius"
    }
  },
  "id": "error-789"
}`, want: `{
  "jsonrpc": "2.0",
  "error": {
    "code": -32602,
    "message": "Invalid params: location is required"
  },
  "id": "error-789"
}`},
		{name: "example 4: missing request body", request: `null`, want: `{
  "jsonrpc": "2.0",
  "error": {
    "code": -32602,
    "message": "Invalid params: missing required parameters"
  }
}`},
		{name: "example 5: tool execution failure", request: `{
  "jsonrpc": "2.0",
  "method": "tools/call",
  "params": {
    "name": "database_query",
    "arguments": {
      "sql": "SELECT * FROM users"
    }
  },
  "id": "fail-101"
}`, want: `{
  "jsonrpc": "2.0",
  "error": {
    "code": -32603,
    "message": "Internal error: HTTP 500 Internal Server Error from POST "
  },
  "id": "fail-101"
}`, messagePrefix: "Internal error: HTTP 500 Internal Server Error from POST ", messagePart: "Connection timeout"},
		{name: "example 5: the backend times out", request: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"database_query","arguments":{"sql":"SELECT pg_sleep(60)"}},"id":"fail-102"}`,
			want:          `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: Request to "},"id":"fail-102"}`,
			messagePrefix: "Internal error: Request to ", messagePart: "timed out after 200ms"},
		{name: "cURL: basic tool call", request: `{
    "jsonrpc": "2.0",
    "method": "tools/call",
    "params": {
      "name": "weather_get",
      "arguments": {
        "location": "New York",
        "units": "fahrenheit"
      }
    },
    "id": "1"
  }`, want: `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"temperature\": 64, \"condition\": \"Sunny\", \"humidity\": 40}"}]},"id":"1"}`},
		{name: "cURL: tool call with array arguments", request: `{
    "jsonrpc": "2.0",
    "method": "tools/call",
    "params": {
      "name": "send_notification",
      "arguments": {
        "recipients": ["[email protected]", "[email protected]"],
        "message": "Deployment completed successfully",
        "priority": "high"
      }
    },
    "id": "2"
  }`, want: `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"priority\":\"high\",\"sent\":2}"}]},"id":"2"}`},
		{name: "unknown tool", request: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope","arguments":{}},"id":7}`,
			want: `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: tool not found"},"id":7}`},
		{name: "argument of the wrong type", request: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search_documents","arguments":{"query":"q","limit":"ten"}},"id":8}`,
			want: `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: limit: got string, want integer"},"id":8}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := g.handsAIPost(t, "call", bearer(key), tt.request)
			r.mustMatchJSON(t, tt.want, tt.messagePrefix, tt.messagePart)
		})
	}
}

// listedNames returns the tool names of a tools/list reply.
func (r *reply) listedNames(tb testing.TB) []string {
	tb.Helper()
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if r.status != http.StatusOK || r.rpc.Error != nil || json.Unmarshal(r.rpc.Result, &res) != nil || string(r.rpc.ID) != `"l"` {
		tb.Fatalf("not a tools/list result for id \"l\": HTTP %d\n%s", r.status, r.body)
	}
	names := []string{}
	for _, t := range res.Tools {
		if len(t.InputSchema) == 0 {
			tb.Errorf("tool %s has no inputSchema", t.Name)
		}
		names = append(names, t.Name)
	}
	return names
}

func TestHandsAIAgentsAndCredentials(t *testing.T) {
	t.Parallel()
	g := mustStartHandsAIGateway(t)
	_, alice := g.mustKey(t, "alice", "")
	_, crm := g.mustKey(t, "alice", "crm")
	_, bob := g.mustKey(t, "bob", "")
	const list = `{"jsonrpc":"2.0","method":"tools/list","id":"l"}`
	lists := []struct {
		name   string
		header http.Header
		want   []string
	}{
		{"user key: every usable agent, clashes qualified", bearer(alice), []string{
			"assistant.status", "contacts_list", "crm.status", "database_query", "search_documents", "send_notification", "weather_get",
		}},
		{"agent key: its agent only", headers("X-Agent-API-Key", crm), []string{"contacts_list", "status"}},
		{"another user's key", bearer(bob), []string{"weather_get"}},
	}
	for _, tt := range lists {
		t.Run("list/"+tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, g.handsAIPost(t, "list", tt.header, list).listedNames(t)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
	calls := []struct {
		name, tool string
		header     http.Header
		want       string // the text of the result, or the error message
	}{
		{"qualified name reaches its agent", "crm.status", bearer(alice), `{"agent": "crm"}`},
		{"the other agent", "assistant.status", bearer(alice), `{"agent": "assistant"}`},
		{"a clashing name alone is unknown", "status", bearer(alice), "Invalid params: tool not found"},
		{"agent key, unqualified", "status", headers("X-Agent-API-Key", crm), `{"agent": "crm"}`},
		{"agent key, another agent's tool", "weather_get", headers("X-Agent-API-Key", crm), "Invalid params: tool not found"},
		{"a disabled agent's tool", "secret_tool", bearer(alice), "Invalid params: tool not found"},
		{"another user's same-named tool", "weather_get", bearer(bob), `{"agent": "bobs"}`},
	}
	for _, tt := range calls {
		t.Run("call/"+tt.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"` + tt.tool + `","arguments":{"location":"x"}},"id":"c"}`
			r := g.handsAIPost(t, "call", tt.header, body)
			got := ""
			if r.rpc.Error != nil {
				got = r.rpc.Error.Message
			} else {
				_, got = r.mustToolResult(t)
			}
			if got != tt.want || string(r.rpc.ID) != `"c"` || r.status != http.StatusOK {
				t.Errorf("HTTP %d, id %s, got %q; want 200, id \"c\", %q", r.status, r.rpc.ID, got, tt.want)
			}
		})
	}
}

func TestHandsAIRefusesWithoutCredential(t *testing.T) {
	t.Parallel()
	g := mustStartHandsAIGateway(t)
	for _, endpoint := range []string{"list", "call"} {
		r := g.handsAIPost(t, endpoint, nil, `{"jsonrpc":"2.0","method":"tools/`+endpoint+`","params":{"name":"weather_get"},"id":1}`)
		r.check(t, want{
			status: http.StatusUnauthorized, code: -32000, reason: "unauthorized", dataStatus: http.StatusUnauthorized,
			header: map[string]string{"WWW-Authenticate": `Bearer realm="MCP", resource_metadata="` + g.URL() + `/.well-known/oauth-protected-resource/mcp/tools/` + endpoint + `"`},
		})
	}
}
