package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jobsAPI is a REST backend with a quick endpoint and one that hangs
// until its request's context ends, telling the test when each hanging
// request started and when it saw its end.
type jobsAPI struct {
	started chan struct{}
	ended   chan struct{}
}

func newJobsAPI() *jobsAPI {
	return &jobsAPI{started: make(chan struct{}, 16), ended: make(chan struct{}, 16)}
}

func (j *jobsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	if r.URL.Path == "/hang" {
		j.started <- struct{}{}
		<-r.Context().Done()
		j.ended <- struct{}{}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"report":"ready"}`)
}

const jobsConfig = `users:
  - name: alice
  - name: bob
agents:
  - id: jobs
    name: Jobs
    description: Runs reports.
    owner: alice
    mcp_enabled: true
    skills:
      - name: reports
        kind: rest
        base_url: BASE
        allow_private: true
        timeout: 120s
        tools:
          - name: quick_report
            description: A report that is ready at once.
            input_schema: {type: object, properties: {month: {type: string}}}
            request: {method: POST, path: /quick, body: all}
          - name: slow_report
            description: A report that never finishes.
            input_schema: {type: object, properties: {month: {type: string}}}
            request: {method: POST, path: /hang, body: all}
          - name: gated_report
            description: A report a human must approve.
            input_schema: {type: object, properties: {month: {type: string}}}
            request: {method: POST, path: /quick, body: all}
            approval: required
`

// jobs is a gateway serving the jobs agent, with alice's and bob's keys.
type jobs struct {
	api   *jobsAPI
	env   []string
	cfg   string
	g     *gateway
	alice string
	bob   string
}

// startJobs starts a gateway on a fresh data dir over a jobs backend.
func startJobs(t *testing.T) *jobs {
	t.Helper()
	return startJobsOn(t, []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")})
}

// startJobsOn starts a gateway on the store env names, with args.
func startJobsOn(t *testing.T, env []string, args ...string) *jobs {
	t.Helper()
	j := &jobs{api: newJobsAPI(), env: env}
	backend := httptest.NewServer(j.api)
	t.Cleanup(backend.Close)
	j.cfg = filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(j.cfg, []byte(strings.ReplaceAll(jobsConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	j.g = startGateway(t, j.env, append([]string{"--config", j.cfg}, args...)...)
	j.alice = strings.TrimSpace(runCLI(t, j.env, "key", "create", "--user", "alice"))
	j.bob = strings.TrimSpace(runCLI(t, j.env, "key", "create", "--user", "bob"))
	return j
}

// apiTask is a task as the management API shows it.
type apiTask struct {
	ID            string          `json:"id"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"status_message"`
	Result        json.RawMessage `json:"result"`
	Error         string          `json:"error"`
}

// do sends a management API request with key and decodes the answer
// into out; it returns the status.
func (j *jobs) do(t *testing.T, key, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, j.g.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && json.Unmarshal(b, out) != nil {
		t.Fatalf("%s %s: HTTP %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// submit starts a task over the management API and returns its ID.
func (j *jobs) submit(t *testing.T, body string) string {
	t.Helper()
	id, status := j.submitAs(t, body)
	if status != "working" {
		t.Fatalf("submit: a new task is %s", status)
	}
	return id
}

// submitAs posts a task and returns the answer's ID and status.
func (j *jobs) submitAs(t *testing.T, body string) (string, string) {
	t.Helper()
	var created struct {
		TaskID string `json:"task_id"`
		Status string `json:"status"`
	}
	if code := j.do(t, j.alice, "POST", "/api/v1/agents/jobs/tasks", body, &created); code != http.StatusAccepted {
		t.Fatalf("submit: HTTP %d %+v", code, created)
	}
	return created.TaskID, created.Status
}

// waitFor polls the task until it has status, and returns it.
func (j *jobs) waitFor(t *testing.T, id, status string) *apiTask {
	t.Helper()
	var task apiTask
	eventually(t, func() bool {
		j.do(t, j.alice, "GET", "/api/v1/tasks/"+id, "", &task)
		return task.Status == status
	})
	return &task
}

// waitSignal waits for a backend signal, failing after a minute.
func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("the backend never saw %s", what)
	}
}

// TestTasksOverREST submits tasks over the management API: one completes
// and is polled for, one is cancelled mid-way and its REST backend sees
// its request's context end.
func TestTasksOverREST(t *testing.T) {
	j := startJobs(t)
	id := j.submit(t, `{"tool":"quick_report","arguments":{"month":"jan"},"idempotency_key":"jan-1"}`)
	task := j.waitFor(t, id, "completed")
	if !strings.Contains(string(task.Result), `report`) {
		t.Fatalf("completed task: %+v", task)
	}
	if again, status := j.submitAs(t, `{"tool":"quick_report","arguments":{"month":"jan"},"idempotency_key":"jan-1"}`); again != id || status != "completed" {
		t.Errorf("the same idempotency key answered task %s, %s; want %s again, completed", again, status, id)
	}
	var list struct {
		Tasks []apiTask `json:"tasks"`
	}
	j.do(t, j.alice, "GET", "/api/v1/tasks?agent=jobs&status=completed", "", &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != id {
		t.Errorf("completed tasks of jobs: %+v", list.Tasks)
	}
	if code := j.do(t, j.bob, "GET", "/api/v1/tasks/"+id, "", nil); code != http.StatusNotFound {
		t.Errorf("bob reads alice's task: HTTP %d; want 404", code)
	}

	slow := j.submit(t, `{"tool":"slow_report","arguments":{"month":"feb"}}`)
	waitSignal(t, j.api.started, "the slow report's request")
	var cancelled apiTask
	if code := j.do(t, j.alice, "POST", "/api/v1/tasks/"+slow+"/cancel", "{}", &cancelled); code != http.StatusOK || cancelled.Status != "cancelled" {
		t.Fatalf("cancel: HTTP %d %+v", code, cancelled)
	}
	waitSignal(t, j.api.ended, "the end of the cancelled request")
	if code := j.do(t, j.alice, "POST", "/api/v1/tasks/"+slow+"/cancel", "{}", nil); code != http.StatusConflict {
		t.Errorf("cancel a cancelled task: HTTP %d; want 409", code)
	}
	if got := j.waitFor(t, slow, "cancelled"); got.Status != "cancelled" {
		t.Errorf("after the call ended: %+v", got)
	}
}

// TestTaskSurvivesRestart kills the gateway while a task runs: after the
// restart the task is still there, failed with the reason.
func TestTaskSurvivesRestart(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	j := startJobs(t)
	id := j.submit(t, `{"tool":"slow_report","arguments":{"month":"mar"}}`)
	waitSignal(t, j.api.started, "the slow report's request")
	j.g.cmd.Process.Kill() // no chance to record anything
	<-j.g.done
	j.g = startGateway(t, j.env, "--config", j.cfg)
	task := j.waitFor(t, id, "failed")
	if !strings.Contains(task.StatusMessage, "the gateway restarted while the task ran") {
		t.Fatalf("task after the restart: %+v", task)
	}
}

// tasksReport is what tasks.mjs prints.
type tasksReport struct {
	Capability   map[string]any  `json:"capability"`
	TaskSupport  string          `json:"taskSupport"`
	Stream       []string        `json:"stream"`
	TaskID       string          `json:"taskId"`
	StreamResult json.RawMessage `json:"streamResult"`
	Other        *struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Listed []string        `json:"listed"`
	} `json:"other"`
	Error json.RawMessage `json:"error"`
}

// TestTasksWithTypeScriptSDK runs a call as an MCP task with the official
// TypeScript SDK client and fetches it again from a second connection.
func TestTasksWithTypeScriptSDK(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	j := startJobs(t)
	plan, _ := json.Marshal(map[string]any{"url": j.g.URL + "/jobs/mcp", "headers": bearer(j.alice),
		"tool": "quick_report", "arguments": map[string]any{"month": "apr"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", "tasks.mjs", string(plan)).Output()
	var rep tasksReport
	if jerr := json.Unmarshal(out, &rep); jerr != nil || err != nil {
		t.Fatalf("tasks.mjs: %v %v: %s", err, jerr, out)
	}
	if rep.Capability["requests"] == nil || rep.TaskSupport != "optional" {
		t.Errorf("capability %v, taskSupport %q", rep.Capability, rep.TaskSupport)
	}
	if rep.TaskID == "" || len(rep.Stream) == 0 || rep.Stream[0] != "taskCreated" || !strings.Contains(string(rep.StreamResult), "report") {
		t.Errorf("task stream %v, id %q, result %s", rep.Stream, rep.TaskID, rep.StreamResult)
	}
	o := rep.Other
	if o == nil || o.Status != "completed" || !strings.Contains(string(o.Result), "report") || !strings.Contains(string(o.Result), rep.TaskID) {
		t.Fatalf("from the second connection: %+v", o)
	}
	if len(o.Listed) == 0 || o.Listed[0] != rep.TaskID {
		t.Errorf("tasks/list on the second connection: %v", o.Listed)
	}
}

// TestTaskCancelOverMCP cancels a task with tasks/cancel on raw JSON-RPC:
// the REST backend sees its request end, tasks/result answers the
// cancellation, and a second cancel is -32602.
func TestTaskCancelOverMCP(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	j := startJobs(t)
	s := openSession(t, j.g.URL+"/jobs/mcp", bearer(j.alice))
	r := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_report","arguments":{},"task":{"ttl":60000}}}`)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if json.Unmarshal(r.Result, &created) != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
		t.Fatalf("task-augmented tools/call: %s", r.Body)
	}
	waitSignal(t, j.api.started, "the slow report's request")
	id := created.Task.TaskID
	if r := s.post(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"` + id + `"}}`); !strings.Contains(string(r.Result), `"status":"cancelled"`) {
		t.Fatalf("tasks/cancel: %s", r.Body)
	}
	waitSignal(t, j.api.ended, "the end of the cancelled request")
	if r := s.post(`{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":"` + id + `"}}`); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("cancel twice: %s", r.Body)
	}
	agentKey := strings.TrimSpace(runCLI(t, j.env, "key", "create", "--agent", "jobs"))
	other := openSession(t, j.g.URL+"/jobs/mcp", bearer(agentKey)) // another identity on the same agent
	if r := other.post(`{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"` + id + `"}}`); r.Status != 200 || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("another identity's tasks/get: %s", r.Body)
	}
}

// TestTaskCancelAcrossReplicas runs two replicas on one PostgreSQL
// database: a task started on one is read and cancelled through the other,
// and the cancel reaches the backend call on the first.
func TestTaskCancelAcrossReplicas(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	j := startJobsOn(t, postgresEnv(t), "--data-dir", t.TempDir())
	other := *j
	other.g = startGateway(t, j.env, "--config", j.cfg, "--data-dir", t.TempDir())
	id := j.submit(t, `{"tool":"slow_report","arguments":{"month":"may"}}`)
	waitSignal(t, j.api.started, "the slow report's request")
	var seen apiTask
	if code := other.do(t, j.alice, "GET", "/api/v1/tasks/"+id, "", &seen); code != http.StatusOK || seen.Status != "working" {
		t.Fatalf("the task on the other replica: HTTP %d %+v", code, seen)
	}
	if code := other.do(t, j.alice, "POST", "/api/v1/tasks/"+id+"/cancel", "{}", &seen); code != http.StatusOK || seen.Status != "cancelled" {
		t.Fatalf("cancel on the other replica: HTTP %d %+v", code, seen)
	}
	waitSignal(t, j.api.ended, "the end of the request cancelled on the other replica")
}

// TestAgentTaskCancel cancels a task whose tool is answered by an agent
// worker: the worker, stalled on the call's chat message, hears of the
// cancel (agentkit ends its handler's context on the cancel message).
func TestAgentTaskCancel(t *testing.T) {
	t.Parallel() // waits on timers and child processes
	g := startAgentGateway(t, []agentSkill{{id: "canceller", skill: "canceller", timeout: "60s"}})
	w := startAgentWorker(t, g, "./testagent", "canceller", "-mode", "stall")
	j := &jobs{g: g.gateway, alice: g.userKey}
	var created struct {
		TaskID string `json:"task_id"`
	}
	body := `{"tool":"canceller","arguments":{"message":"take your time"}}`
	if code := j.do(t, j.alice, "POST", "/api/v1/agents/canceller/tasks", body, &created); code != http.StatusAccepted {
		t.Fatalf("submit: HTTP %d", code)
	}
	id := mustMatch(t, gotLine, waitFor(t, w.out.String, "got msg_"))
	var task apiTask
	if code := j.do(t, j.alice, "POST", "/api/v1/tasks/"+created.TaskID+"/cancel", "{}", &task); code != http.StatusOK || task.Status != "cancelled" {
		t.Fatalf("cancel: HTTP %d %+v", code, task)
	}
	waitFor(t, w.out.String, "cancelled "+id)
}

// TestTaskThroughApproval runs a gated tool as a task: the task says it is
// waiting for approval until alice approves, then completes, as the same
// pipeline as a tools/call runs it.
func TestTaskThroughApproval(t *testing.T) {
	j := startJobs(t)
	id := j.submit(t, `{"tool":"gated_report","arguments":{"month":"jun"}}`)
	var task apiTask
	eventually(t, func() bool {
		j.do(t, j.alice, "GET", "/api/v1/tasks/"+id, "", &task)
		return strings.Contains(task.StatusMessage, "waiting for approval")
	})
	var pending struct {
		Approvals []struct {
			ID   string `json:"id"`
			Tool string `json:"tool"`
		} `json:"approvals"`
	}
	j.do(t, j.alice, "GET", "/api/v1/approvals?state=pending", "", &pending)
	if len(pending.Approvals) != 1 || pending.Approvals[0].Tool != "gated_report" {
		t.Fatalf("pending approvals: %+v", pending)
	}
	if code := j.do(t, j.alice, "POST", "/api/v1/approvals/"+pending.Approvals[0].ID+"/approve", "{}", nil); code != http.StatusOK {
		t.Fatalf("approve: HTTP %d", code)
	}
	if done := j.waitFor(t, id, "completed"); !strings.Contains(string(done.Result), "report") {
		t.Fatalf("approved task: %+v", done)
	}
}
