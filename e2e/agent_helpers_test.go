package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/examples/csvagent/csvq"
)

// ordersCSV is the table csvagent answers about in these tests.
const ordersCSV = `region,product,amount
EU,Widget,10
EU,Gadget,30
US,Widget,20
US,Gizmo,50
APAC,Widget,5
`

// agentSkill is one agent with one skill of kind agent in the config.
type agentSkill struct {
	id, skill, timeout string
	extra              string // more lines of the skill, indented by 8
}

// agentConfig writes the config of the agent tests: alice owns every
// agent; the analyst's skill also declares csv_query.
func agentConfig(agents []agentSkill) string {
	var b strings.Builder
	b.WriteString("users:\n  - name: alice\n    password: ${env:ALICE_PASSWORD}\nagents:\n")
	for _, a := range agents {
		fmt.Fprintf(&b, "  - id: %s\n    name: %s agent\n    description: The %s agent of the end-to-end tests.\n    owner: alice\n    mcp_enabled: true\n    skills:\n      - name: %s\n        kind: agent\n        timeout: %s\n%s",
			a.id, a.id, a.id, a.skill, a.timeout, a.extra)
	}
	return b.String()
}

// csvQueryTool declares csv_query on a skill.
func csvQueryTool() string {
	return fmt.Sprintf("        tools:\n          - name: %s\n            description: %s\n            input_schema: %s\n", csvq.ToolName, yamlQuote(csvq.ToolDescription), csvq.ToolSchema)
}

// agentGateway is a gateway serving the agents of a config, with the keys
// the tests use.
type agentGateway struct {
	*gateway
	env     []string
	userKey string // alice's, for MCP hosts
	dir     string
}

// startAgentGateway applies the config and starts serve with a short
// visibility timeout, so that redelivery is quick.
func startAgentGateway(t *testing.T, agents []agentSkill, env ...string) *agentGateway {
	t.Helper()
	return startAgentGatewayLog(t, agents, "", env...)
}

// startAgentGatewayLog is startAgentGateway with the gateway's log written
// to the file logPath, as startGatewayLog does, when it is not empty.
func startAgentGatewayLog(t *testing.T, agents []agentSkill, logPath string, env ...string) *agentGateway {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(agentConfig(agents)), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "ALICE_PASSWORD=correct horse battery", "MCPGATE_DATA_DIR="+filepath.Join(dir, "data"))
	g := startGatewayLog(t, env, logPath, "--config", cfg, "--agent-visibility", "1s")
	key := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	return &agentGateway{gateway: g, env: env, userKey: key, dir: dir}
}

// agentKey makes a key for an agent's workers.
func (g *agentGateway) agentKey(t *testing.T, agentID string) string {
	t.Helper()
	return strings.TrimSpace(runCLI(t, g.env, "key", "create", "--agent", agentID, "--name", "worker"))
}

// mcpURL is an agent's MCP endpoint.
func (g *agentGateway) mcpURL(agentID string) string { return g.URL + "/" + agentID + "/mcp" }

// agentWorker is a running worker process.
type agentWorker struct {
	cmd *exec.Cmd
	out *lockedBuffer
}

// startAgentWorker runs a worker built from pkg for an agent and waits
// until its inbox stream is open.
func startAgentWorker(t *testing.T, g *agentGateway, pkg, agentID string, args ...string) *agentWorker {
	t.Helper()
	env := []string{"MCPGATE_AGENT_KEY=" + g.agentKey(t, agentID)}
	cmd, out := startProcess(t, env, buildTool(t, pkg), append([]string{"-url", g.URL}, args...)...)
	waitFor(t, out.String, "agentkit: inbox connected")
	return &agentWorker{cmd: cmd, out: out}
}

// agentCall is one call of an agent.mjs plan.
type agentCall struct {
	Name                string         `json:"name"`
	Arguments           map[string]any `json:"arguments,omitempty"`
	Progress            bool           `json:"progress,omitempty"`
	AbortOnProgress     bool           `json:"abortOnProgress,omitempty"`
	ContextFromPrevious bool           `json:"contextFromPrevious,omitempty"`
}

// agentPlan tells agent.mjs what to call, in which sessions.
type agentPlan struct {
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	TimeoutMS int               `json:"timeoutMs,omitempty"`
	Sessions  [][]agentCall     `json:"sessions"`
}

// agentOutcome is the outcome of one call in agent.mjs's report.
type agentOutcome struct {
	Name   string `json:"name"`
	Result *struct {
		toolResult
		Meta map[string]any `json:"_meta"`
	} `json:"result"`
	Error *struct {
		Message string         `json:"message"`
		Code    int            `json:"code"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	Progress []map[string]any `json:"progress"`
	MS       float64          `json:"ms"`
	Aborted  bool             `json:"aborted"`
}

// text returns the result's first text block, or the error.
func (o *agentOutcome) text() string {
	switch {
	case o.Error != nil:
		return fmt.Sprintf("error %d: %s", o.Error.Code, o.Error.Message)
	case o.Result == nil || len(o.Result.Content) == 0:
		return "no content"
	}
	return o.Result.Content[0].Text
}

// runAgentPlan runs agent.mjs and returns the outcomes per session.
func runAgentPlan(t *testing.T, plan agentPlan) [][]*agentOutcome {
	t.Helper()
	s, err := tryAgentPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tryAgentPlan runs agent.mjs; safe to call off the test's goroutine.
func tryAgentPlan(plan agentPlan) ([][]*agentOutcome, error) {
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", "agent.mjs", string(b)).Output()
	var rep struct {
		Sessions [][]*agentOutcome `json:"sessions"`
		Error    *clientError      `json:"error"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil || err != nil || rep.Error != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return nil, fmt.Errorf("agent.mjs: %v %v %+v\n%s\n%s", err, jerr, rep.Error, out, stderr)
	}
	return rep.Sessions, nil
}

// callLater makes one call in the background and returns its outcome,
// or nil after a failure it logs.
func (g *agentGateway) callLater(t *testing.T, agentID string, c agentCall) <-chan *agentOutcome {
	done := make(chan *agentOutcome, 1)
	plan := agentPlan{URL: g.mcpURL(agentID), Headers: bearer(g.userKey), Sessions: [][]agentCall{{c}}}
	go func() {
		s, err := tryAgentPlan(plan)
		if err != nil {
			t.Error(err)
			done <- &agentOutcome{Name: c.Name}
			return
		}
		done <- s[0][0]
	}()
	return done
}

// call runs one call in a session of its own.
func (g *agentGateway) call(t *testing.T, agentID string, c agentCall) *agentOutcome {
	t.Helper()
	return runAgentPlan(t, agentPlan{URL: g.mcpURL(agentID), Headers: bearer(g.userKey), Sessions: [][]agentCall{{c}}})[0][0]
}

// ask returns a call of the chat tool.
func ask(skill, message string) agentCall {
	return agentCall{Name: skill, Arguments: map[string]any{"message": message}}
}

// wantText fails unless the outcome's text is want.
func wantText(t *testing.T, o *agentOutcome, want string) {
	t.Helper()
	if got := o.text(); got != want {
		t.Errorf("%s answered %q, want %q", o.Name, got, want)
	}
}

// gotLine is what testagent prints for each chat message.
var gotLine = regexp.MustCompile(`got (msg_\S+)`)
