package handsai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pipeline"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/server"
)

// handsAISource is a registry source of fixed agents and skills.
type handsAISource struct {
	agents []*mcpgate.Agent
	skills []*mcpgate.Skill
}

func (f *handsAISource) ListAgents(context.Context, mcpgate.AgentFilter) ([]*mcpgate.Agent, error) {
	return f.agents, nil
}

func (f *handsAISource) ListSkills(context.Context, string) ([]*mcpgate.Skill, error) {
	return f.skills, nil
}

func (f *handsAISource) Generation(context.Context) (int64, error) { return 1, nil }

// handsAIAgent is an agent with tools that all take one input schema.
type handsAIAgent struct {
	agent  *mcpgate.Agent
	schema string
	tools  []string
}

// newHandsAIAgent returns an MCP-enabled agent of owner with tools taking
// any object.
func newHandsAIAgent(id, owner string, tools ...string) handsAIAgent {
	return handsAIAgent{agent: &mcpgate.Agent{ID: id, OwnerID: owner, MCPEnabled: true}, schema: `{"type":"object"}`, tools: tools}
}

// mustHandsAIRegistry returns a loaded registry of the agents and their tools.
func mustHandsAIRegistry(tb testing.TB, agents ...handsAIAgent) *registry.Registry {
	tb.Helper()
	src := &handsAISource{}
	for _, a := range agents {
		src.agents = append(src.agents, a.agent)
		skill := &mcpgate.Skill{AgentID: a.agent.ID, Name: "api", Kind: mcpgate.SkillREST, AutoApprove: true}
		for _, n := range a.tools {
			desc := fmt.Sprintf("Tool %s of %s.", n, a.agent.ID)
			skill.Tools = append(skill.Tools, &mcpgate.Tool{Name: n, Description: desc, InputSchema: json.RawMessage(a.schema)})
		}
		src.skills = append(src.skills, skill)
	}
	r := registry.New(src, nil)
	if err := r.Reload(context.Background()); err != nil {
		tb.Fatal(err)
	}
	for _, a := range agents {
		if t, _ := r.Table(a.agent.ID); len(t.Tools) != len(a.tools) {
			tb.Fatalf("agent %s: tools not loaded", a.agent.ID)
		}
	}
	return r
}

// handsAIAuth knows credentials by bearer token.
type handsAIAuth map[string]*mcpgate.Credential

func (f handsAIAuth) Authenticate(r *http.Request) (*mcpgate.Credential, error) {
	if c := f[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]; c != nil {
		return c, nil
	}
	return nil, mcpgate.Errorf(mcpgate.EUNAUTHORIZED, "authentication required")
}

// handsAICaller is the backend behind the real pipeline in these tests: it
// answers each tool by name and remembers the calls it got.
type handsAICaller struct {
	mu      sync.Mutex
	calls   []mcpgate.Call
	answers map[string]handsAIAnswer
}

// handsAIAnswer is what the fake caller returns for one tool.
type handsAIAnswer struct {
	res *mcpgate.Result
	err error
}

func (f *handsAICaller) CallTool(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, *call)
	f.mu.Unlock()
	if a, ok := f.answers[call.ToolName]; ok {
		return a.res, a.err
	}
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok " + string(call.Arguments))}}, nil
}

// lastCall returns the most recent call.
func (f *handsAICaller) lastCall(tb testing.TB) mcpgate.Call {
	tb.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		tb.Fatal("the caller got no call")
	}
	return f.calls[len(f.calls)-1]
}

// handsAIMetrics records nothing.
type handsAIMetrics struct{}

func (handsAIMetrics) ObserveRequest(string, int, time.Duration) {}
func (handsAIMetrics) Handler() http.Handler                     { return http.NotFoundHandler() }

// Credentials of the tests.
var (
	handsAIAlice  = &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k1", UserID: "alice"}
	handsAICRMKey = &mcpgate.Credential{Kind: mcpgate.CredentialAgentKey, ID: "k2", UserID: "alice", AgentID: "crm"}
	handsAIBob    = &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k3", UserID: "bob"}
)

func TestHandsAIToolNames(t *testing.T) {
	hidden := newHandsAIAgent("hidden", "alice", "weather_get", "secret")
	hidden.agent.MCPEnabled = false
	base := []handsAIAgent{
		newHandsAIAgent("assistant", "alice", "weather_get", "status"),
		newHandsAIAgent("crm", "alice", "contacts_list", "status"),
		hidden,
		newHandsAIAgent("bobs", "bob", "weather_get"),
	}
	tests := []struct {
		name   string
		cred   *mcpgate.Credential
		agents []handsAIAgent
		want   []string // "listed name=agent/tool"
		absent []string // names that must not resolve
	}{
		{"clash between usable agents is qualified", handsAIAlice, base, []string{
			"assistant.status=assistant/status", "contacts_list=crm/contacts_list",
			"crm.status=crm/status", "weather_get=assistant/weather_get",
		}, []string{"status", "secret", "hidden.secret", "bobs.weather_get", "bobs.status", "assistant.weather_get", "nope", "crm.nope", "crm."}},
		{"agent key sees its agent only, unqualified", handsAICRMKey, base, []string{
			"contacts_list=crm/contacts_list", "status=crm/status",
		}, []string{"weather_get", "crm.status", "assistant.status"}},
		{"another user's agents", handsAIBob, base, []string{"weather_get=bobs/weather_get"}, []string{"status", "secret"}},
		{"dotted name equal to a qualified one", handsAIAlice, append(base, newHandsAIAgent("zz", "alice", "crm.status", "x.y")), []string{
			"assistant.status=assistant/status", "contacts_list=crm/contacts_list",
			"crm.status=crm/status", "weather_get=assistant/weather_get", "x.y=zz/x.y", "zz.crm.status=zz/crm.status",
		}, []string{"zz.x.y"}},
		{"dotted names clashing", handsAIAlice, []handsAIAgent{newHandsAIAgent("a", "alice", "x.y"), newHandsAIAgent("b", "alice", "x.y")}, []string{
			"a.x.y=a/x.y", "b.x.y=b/x.y",
		}, []string{"x.y"}},
		{"no agents", handsAIAlice, nil, nil, []string{"status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tables := mustHandsAIRegistry(t, tt.agents...).Tables()
			tools := usableHandsAITools(tables, tt.cred)
			sortHandsAITools(tools)
			var got []string
			for _, tool := range tools {
				got = append(got, tool.name+"="+tool.agent.ID+"/"+tool.entry.Name)
				if r := resolveHandsAITool(tables, tt.cred, tool.name); r == nil || r.entry != tool.entry || r.name != tool.name {
					t.Errorf("resolveHandsAITool(%q) = %+v, want the listed tool", tool.name, r)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for _, name := range tt.absent {
				if r := resolveHandsAITool(tables, tt.cred, name); r != nil {
					t.Errorf("resolveHandsAITool(%q) = %s/%s, want nil", name, r.agent.ID, r.entry.Name)
				}
			}
		})
	}
}

func TestInvalidParamsFailure(t *testing.T) {
	tests := []struct{ lines, want string }{
		{"(arguments): missing property 'location'", "Invalid params: location is required"},
		{"(arguments): missing properties 'a', 'b'\n/limit: got string, want integer", "Invalid params: a is required; b is required; limit: got string, want integer"},
		{"/rows/0: missing property 'qty'", "Invalid params: rows.0.qty is required"},
		{"/a~1b/c~0d: minimum: got 0, want 1", "Invalid params: a/b.c~d: minimum: got 0, want 1"},
		{"(arguments): got array, want object", "Invalid params: arguments: got array, want object"},
		{"(arguments): missing property 'it\\'s'", "Invalid params: it's is required"},
		{"something else", "Invalid params: something else"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			f := invalidParamsFailure(tt.lines)
			if f.Code != handsAIInvalidParams || f.Message != tt.want {
				t.Errorf("invalidParamsFailure(%q) = %d %q, want -32602 %q", tt.lines, f.Code, f.Message, tt.want)
			}
		})
	}
}

// handsAITest is the surface behind the real server (its route table and
// authentication front) with fake tables and authentication, and the real
// pipeline over a fake backend.
type handsAITest struct {
	url    string
	caller *handsAICaller
}

// handsAIWeatherSchema is the input schema of the test's weather_get.
const handsAIWeatherSchema = `{"type":"object","properties":{"location":{"type":"string"},"units":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["location"]}`

// newHandsAITest serves the HandsAI surface on 127.0.0.1.
func newHandsAITest(tb testing.TB) *handsAITest {
	tb.Helper()
	caller := &handsAICaller{answers: map[string]handsAIAnswer{
		"fails":   {res: mcpgate.ErrorResult("HTTP 500 from POST /query\n\n")},
		"slow":    {err: mcpgate.Errorf(mcpgate.ETIMEOUT, "tool slow did not answer within 1s")},
		"broken":  {err: fmt.Errorf("disk on fire")},
		"vanish":  {err: mcpgate.Errorf(mcpgate.ENOTFOUND, "unknown tool")},
		"relayed": {res: &mcpgate.Result{Raw: json.RawMessage(`{"content":[{"type":"text","text":"remote says no"}],"isError":true}`)}},
		"empty":   {res: &mcpgate.Result{}},
	}}
	assistant := newHandsAIAgent("assistant", "alice", "weather_get", "status")
	assistant.schema = handsAIWeatherSchema
	tables := mustHandsAIRegistry(tb, assistant, newHandsAIAgent("crm", "alice", "status", "fails", "slow", "broken", "vanish", "relayed", "empty"))
	pipe := pipeline.New(&pipeline.Options{Tables: tables, Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: caller}})
	s, err := server.New(&server.Options{
		Tables: tables, HandsAI: New(&Options{Tables: tables, Caller: pipe}), Metrics: handsAIMetrics{}, PublicURL: "http://127.0.0.1:8094",
		Auth: handsAIAuth{"alice": handsAIAlice, "crm": handsAICRMKey},
	})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	return &handsAITest{url: srv.URL, caller: caller}
}

// post sends body to path with a bearer token and returns the status, the
// header and the body.
func (h *handsAITest) post(tb testing.TB, path, token, body string) (int, http.Header, string) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// mustEqualHandsAIJSON compares two JSON documents as values.
func mustEqualHandsAIJSON(tb testing.TB, want, got string) {
	tb.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatalf("want is not JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		tb.Fatalf("response is not JSON: %v\n%s", err, got)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		tb.Errorf("response (-want +got):\n%s", diff)
	}
}

// handsAICallBody returns a tools/call request with an id.
func handsAICallBody(id, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":%q,"arguments":%s},"id":%s}`, tool, args, id)
}

// handsAIErrorJSON returns the JSON of an error response; id "" means none.
func handsAIErrorJSON(id string, code int, msg string) string {
	m, _ := json.Marshal(msg)
	if id == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","error":{"code":%d,"message":%s}}`, code, m)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","error":{"code":%d,"message":%s},"id":%s}`, code, m, id)
}

func TestHandsAICall(t *testing.T) {
	h := newHandsAITest(t)
	tests := []struct {
		name, token, body, want string
	}{
		{"success", "alice", handsAICallBody(`"w-1"`, "weather_get", `{"location":"Paris","units":"celsius"}`),
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"ok {\"location\":\"Paris\",\"units\":\"celsius\"}"}]},"id":"w-1"}`},
		{"numeric id", "alice", handsAICallBody(`42`, "weather_get", `{"location":"Oslo"}`),
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"ok {\"location\":\"Oslo\"}"}]},"id":42}`},
		{"no id", "alice", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"crm.status"}}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"ok {}"}]}}`},
		{"null id is no id", "alice", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"crm.status","arguments":null},"id":null}`,
			`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"ok {}"}]}}`},
		{"empty result", "alice", handsAICallBody(`1`, "empty", `{}`), `{"jsonrpc":"2.0","result":{"content":[]},"id":1}`},
		{"agent key, unqualified", "crm", handsAICallBody(`1`, "status", `{}`), `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"ok {}"}]},"id":1}`},
		{"null body", "alice", `null`, handsAIErrorJSON("", -32602, "Invalid params: missing required parameters")},
		{"empty body", "alice", ``, handsAIErrorJSON("", -32602, "Invalid params: missing required parameters")},
		{"no params", "alice", `{"jsonrpc":"2.0","method":"tools/call","id":"x"}`, handsAIErrorJSON(`"x"`, -32602, "Invalid params: missing required parameters")},
		{"null params", "alice", `{"jsonrpc":"2.0","method":"tools/call","params":null,"id":"x"}`, handsAIErrorJSON(`"x"`, -32602, "Invalid params: missing required parameters")},
		{"no name", "alice", `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{}},"id":3}`, handsAIErrorJSON(`3`, -32602, "Invalid params: name is required")},
		{"params not an object", "alice", `{"jsonrpc":"2.0","method":"tools/call","params":[1],"id":3}`, handsAIErrorJSON(`3`, -32602, "Invalid params: params must be an object with a string name and an arguments object")},
		{"unknown tool", "alice", handsAICallBody(`"u"`, "nope", `{}`), handsAIErrorJSON(`"u"`, -32602, "Invalid params: tool not found")},
		{"clashing name needs its agent", "alice", handsAICallBody(`"u"`, "status", `{}`), handsAIErrorJSON(`"u"`, -32602, "Invalid params: tool not found")},
		{"other agent's tool for an agent key", "crm", handsAICallBody(`"u"`, "weather_get", `{"location":"x"}`), handsAIErrorJSON(`"u"`, -32602, "Invalid params: tool not found")},
		{"required argument", "alice", handsAICallBody(`"error-789"`, "weather_get", `{"units":"celsius"}`), handsAIErrorJSON(`"error-789"`, -32602, "Invalid params: location is required")},
		{"wrong types", "alice", handsAICallBody(`5`, "weather_get", `{"location":"x","units":"kelvin","days":"two"}`),
			handsAIErrorJSON(`5`, -32602, `Invalid params: days: got string, want integer; units: value must be one of 'celsius', 'fahrenheit'`)},
		{"arguments not an object", "alice", handsAICallBody(`5`, "weather_get", `[]`), handsAIErrorJSON(`5`, -32602, "Invalid params: arguments: got array, want object")},
		{"tool failure", "alice", handsAICallBody(`"fail-101"`, "fails", `{}`), handsAIErrorJSON(`"fail-101"`, -32603, "Internal error: HTTP 500 from POST /query")},
		{"relayed tool failure", "alice", handsAICallBody(`1`, "relayed", `{}`), handsAIErrorJSON(`1`, -32603, "Internal error: remote says no")},
		{"timeout", "alice", handsAICallBody(`1`, "slow", `{}`), handsAIErrorJSON(`1`, -32603, "Internal error: tool slow did not answer within 1s")},
		{"gateway failure", "alice", handsAICallBody(`1`, "broken", `{}`), handsAIErrorJSON(`1`, -32603, "Internal error: the gateway failed; its log has the details")},
		{"tool gone during the call", "alice", handsAICallBody(`1`, "vanish", `{}`), handsAIErrorJSON(`1`, -32602, "Invalid params: tool not found")},
		{"parse error", "alice", `{"jsonrpc":`, handsAIErrorJSON("", -32700, "Parse error: the body is not valid JSON")},
		{"batch", "alice", `[` + handsAICallBody(`1`, "status", `{}`) + `]`, handsAIErrorJSON("", -32600, "Invalid Request: send one JSON-RPC request object")},
		{"wrong method", "alice", `{"jsonrpc":"2.0","method":"tools/list","id":9}`, handsAIErrorJSON(`9`, -32601, `Method not found: "tools/list"; this endpoint serves "tools/call"`)},
		{"no method", "alice", `{"jsonrpc":"2.0","params":{"name":"x"},"id":9}`, handsAIErrorJSON(`9`, -32601, `Method not found: ""; this endpoint serves "tools/call"`)},
		{"wrong version", "alice", `{"jsonrpc":"1.0","method":"tools/call","id":9}`, handsAIErrorJSON(`9`, -32600, `Invalid Request: jsonrpc must be "2.0"`)},
		{"method not a string", "alice", `{"jsonrpc":"2.0","method":7,"id":9}`, handsAIErrorJSON(`9`, -32600, `Invalid Request: jsonrpc and method must be strings`)},
		{"object id", "alice", `{"jsonrpc":"2.0","method":"tools/call","id":{}}`, handsAIErrorJSON("", -32600, "Invalid Request: id must be a string or a number")},
		// The mcp package's decoder reads the envelope: member names are
		// exact and said once, as on the MCP endpoint.
		{"duplicate id", "alice", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"crm.status"},"id":1,"id":2}`,
			handsAIErrorJSON("", -32600, `Invalid Request: duplicate member "id"`)},
		{"miscased member", "alice", `{"jsonrpc":"2.0","method":"tools/call","Params":{"name":"crm.status"},"id":1}`,
			handsAIErrorJSON(`1`, -32600, `Invalid Request: member names are case-sensitive: "Params" is not "params"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, hdr, body := h.post(t, "/mcp/tools/call", tt.token, tt.body)
			if status != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
				t.Errorf("HTTP %d, Content-Type %q; want 200 application/json", status, hdr.Get("Content-Type"))
			}
			mustEqualHandsAIJSON(t, tt.want, body)
		})
	}
}

func TestHandsAICallGoesThroughTheCaller(t *testing.T) {
	h := newHandsAITest(t)
	h.post(t, "/mcp/tools/call", "alice", handsAICallBody(`1`, "crm.status", `{"a":1}`))
	got := h.caller.lastCall(t)
	if got.Agent.ID != "crm" || got.ToolName != "status" || string(got.Arguments) != `{"a":1}` || got.Caller != handsAIAlice.Caller() || got.Notifier == nil {
		t.Errorf("call = agent %s, tool %s, arguments %s, caller %+v, notifier %v", got.Agent.ID, got.ToolName, got.Arguments, got.Caller, got.Notifier)
	}
}

func TestHandsAIList(t *testing.T) {
	h := newHandsAITest(t)
	tests := []struct{ name, token, want string }{
		{"user key", "alice", `["assistant.status","broken","crm.status","empty","fails","relayed","slow","vanish","weather_get"]`},
		{"agent key", "crm", `["broken","empty","fails","relayed","slow","status","vanish"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := h.post(t, "/mcp/tools/list", tt.token, `{"jsonrpc":"2.0","method":"tools/list","id":"l"}`)
			var resp struct {
				JSONRPC string `json:"jsonrpc"`
				ID      string `json:"id"`
				Result  struct {
					Tools []struct {
						Name        string          `json:"name"`
						Description string          `json:"description"`
						InputSchema json.RawMessage `json:"inputSchema"`
					} `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &resp); err != nil || status != http.StatusOK || resp.JSONRPC != "2.0" || resp.ID != "l" {
				t.Fatalf("HTTP %d, %v:\n%s", status, err, body)
			}
			var names []string
			for _, tool := range resp.Result.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" || len(tool.InputSchema) == 0 {
					t.Errorf("tool %s lost its description or input schema", tool.Name)
				}
			}
			mustEqualHandsAIJSON(t, tt.want, mustHandsAIJSON(t, names))
		})
	}
	_, _, body := h.post(t, "/mcp/tools/list", "alice", `{"jsonrpc":"2.0","method":"tools/list","id":1}`)
	if !strings.Contains(body, `"description":"Tool status of crm."`) {
		t.Errorf("qualified crm.status does not keep its description:\n%s", body)
	}
	_, _, body = h.post(t, "/mcp/tools/list", "alice", `{"jsonrpc":"2.0","method":"tools/call","id":1}`)
	mustEqualHandsAIJSON(t, handsAIErrorJSON(`1`, -32601, `Method not found: "tools/call"; this endpoint serves "tools/list"`), body)
}

// mustHandsAIJSON encodes v.
func mustHandsAIJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestHandsAIHTTPErrors(t *testing.T) {
	h := newHandsAITest(t)
	for _, path := range []string{"/mcp/tools/list", "/mcp/tools/call"} {
		status, hdr, _ := h.post(t, path, "", handsAICallBody(`1`, "status", `{}`))
		want := `Bearer realm="MCP", resource_metadata="http://127.0.0.1:8094/.well-known/oauth-protected-resource` + path + `"`
		if status != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") != want {
			t.Errorf("%s without credential: HTTP %d, WWW-Authenticate %q; want 401 %q", path, status, hdr.Get("WWW-Authenticate"), want)
		}
	}
	big := handsAICallBody(`1`, "weather_get", `{"location":"`+strings.Repeat("x", handsAIMaxBody)+`"}`)
	if status, _, _ := h.post(t, "/mcp/tools/call", "alice", big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("body over 4 MiB: HTTP %d, want 413", status)
	}
	status, _, _ := h.post(t, "/mcp/tools/call", "alice", handsAICallBody(`1`, "weather_get", `{"location":"`+strings.Repeat("x", handsAIMaxBody-200)+`"}`))
	if status != http.StatusOK {
		t.Errorf("body just under 4 MiB: HTTP %d, want 200", status)
	}
}

// BenchmarkHandsAIResolve measures what each HandsAI call pays to find its
// tool: naming every tool of 100 usable agents of 20 tools each, half of
// the names clashing.
func BenchmarkHandsAIResolve(b *testing.B) {
	var agents []handsAIAgent
	for i := range 100 {
		names := make([]string, 20)
		for j := range names {
			names[j] = fmt.Sprintf("tool_%d", j)
			if j%2 == 1 {
				names[j] = fmt.Sprintf("tool_%d_%d", i, j)
			}
		}
		agents = append(agents, newHandsAIAgent(fmt.Sprintf("agent%03d", i), "alice", names...))
	}
	tables := mustHandsAIRegistry(b, agents...).Tables()
	for _, name := range []string{"agent099.tool_18", "tool_99_19"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if resolveHandsAITool(tables, handsAIAlice, name) == nil {
					b.Fatal("tool not found")
				}
			}
		})
	}
}
