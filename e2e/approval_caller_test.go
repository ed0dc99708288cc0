package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const confirmConfig = `users:
  - name: alice
agents:
  - id: files
    name: Files
    description: Deletes files once the caller confirms.
    owner: alice
    mcp_enabled: true
    skills:
      - name: fs
        kind: rest
        base_url: BASE
        allow_private: true
        auto_approve: false
        approval: caller
        tools:
          - name: delete
            description: Delete a file.
            input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
            request: {method: POST, path: /delete, body: all}
`

// confirmPlan tells confirm.mjs what to call and how to answer.
type confirmPlan struct {
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	Call        clientCall        `json:"call"`
	Elicitation bool              `json:"elicitation"`
	Answer      map[string]any    `json:"answer,omitempty"`
}

// confirmReport is what confirm.mjs prints.
type confirmReport struct {
	Elicitations []struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	} `json:"elicitations"`
	Result *toolResult  `json:"result"`
	Error  *clientError `json:"error"`
}

// runConfirm runs confirm.mjs; safe to call off the test's goroutine.
func runConfirm(plan confirmPlan) (*confirmReport, error) {
	b, _ := json.Marshal(plan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", "confirm.mjs", string(b)).Output()
	var rep confirmReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil || err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return &rep, fmt.Errorf("confirm.mjs: %v %v %+v: %s %s", err, jerr, rep.Error, out, stderr)
	}
	return &rep, nil
}

// TestApprovalCallerElicitation drives the binary with the official
// TypeScript SDK client on a skill with approval: caller: the client that
// declared elicitation is asked to confirm the call, with the tool's name
// and arguments; accepting runs it once with those arguments, declining
// answers isError; a client without the capability waits for a reviewer.
func TestApprovalCallerElicitation(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	api := &recordingAPI{}
	backend := httptest.NewServer(api)
	t.Cleanup(backend.Close)
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(confirmConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, env, "--config", cfg)
	alice := strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	plan := confirmPlan{URL: g.URL + "/files/mcp", Headers: bearer(alice), Elicitation: true,
		Call:   clientCall{Name: "delete", Arguments: map[string]any{"path": "/tmp/yes"}},
		Answer: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	rep, err := runConfirm(plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Elicitations) != 1 || !strings.Contains(rep.Elicitations[0].Message, "delete") ||
		!strings.Contains(rep.Elicitations[0].Message, "/tmp/yes") || rep.Elicitations[0].RequestedSchema.Properties["confirm"].Type != "boolean" {
		t.Fatalf("elicitations: %+v", rep.Elicitations)
	}
	if rep.Result == nil || rep.Result.IsError || !strings.Contains(rep.Result.Content[0].Text, "/tmp/yes") {
		t.Fatalf("accepted call: %+v", rep.Result)
	}
	if got := api.seen(); len(got) != 1 || got[0] != `{"path":"/tmp/yes"}` {
		t.Fatalf("backend saw %q; want the confirmed arguments once", got)
	}

	plan.Call.Arguments = map[string]any{"path": "/tmp/no"}
	plan.Answer = map[string]any{"action": "decline"}
	if rep, err = runConfirm(plan); err != nil {
		t.Fatal(err)
	}
	if rep.Result == nil || !rep.Result.IsError || rep.Result.Content[0].Text != "Call to delete was declined by the caller" {
		t.Fatalf("declined call: %+v", rep.Result)
	}
	if got := api.seen(); len(got) != 1 {
		t.Fatalf("backend saw %q after a decline; want only the first call", got)
	}
	checkCallerFallback(t, g, alice, plan, api)
}

// checkCallerFallback calls without the elicitation capability: the call
// waits for a reviewer, whose approve runs it.
func checkCallerFallback(t *testing.T, g *gateway, alice string, plan confirmPlan, api *recordingAPI) {
	t.Helper()
	plan.Elicitation, plan.Answer = false, nil
	plan.Call.Arguments = map[string]any{"path": "/tmp/reviewed"}
	type answer struct {
		rep *confirmReport
		err error
	}
	done := make(chan answer, 1)
	go func() {
		rep, err := runConfirm(plan)
		done <- answer{rep, err}
	}()
	s := &gated{g: g, alice: alice}
	a := s.pending(t)
	if st := s.decide(t, alice, a.ID, "approve", ""); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	got := <-done
	if got.err != nil || got.rep.Result.IsError || len(got.rep.Elicitations) != 0 {
		t.Fatalf("call left to a reviewer: %+v, %v", got.rep, got.err)
	}
	if seen := api.seen(); len(seen) != 2 || seen[1] != `{"path":"/tmp/reviewed"}` {
		t.Fatalf("backend saw %q", seen)
	}
}
