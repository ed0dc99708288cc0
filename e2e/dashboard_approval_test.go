package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// reviewConfig gates every call of the files agent's delete tool; alice
// owns the agent and bob may decide as the skill's approver. Both sign in
// to the dashboard with a password.
const reviewConfig = `users:
  - name: alice
    password: ${env:ALICE_PASSWORD}
  - name: bob
    password: ${env:BOB_PASSWORD}
agents:
  - id: files
    name: Files
    description: Deletes files.
    owner: alice
    mcp_enabled: true
    skills:
      - name: fs
        kind: rest
        base_url: BASE
        allow_private: true
        auto_approve: false
        approvers: [bob]
        tools:
          - name: delete
            description: Delete a file.
            input_schema: {type: object, properties: {path: {type: string}}, required: [path]}
            request: {method: POST, path: /delete, body: all}
`

// review is the gateway of reviewConfig with its recording backend, a key
// of alice's for the TS SDK client and the management API, and one of
// bob's for the API.
type review struct {
	g          *gateway
	api        *recordingAPI
	alice, bob string
}

func newReview(t *testing.T) *review {
	t.Helper()
	r := &review{api: &recordingAPI{}}
	backend := httptest.NewServer(r.api)
	t.Cleanup(backend.Close)
	cfg := filepath.Join(t.TempDir(), "mcpgate.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(reviewConfig, "BASE", backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGATE_DATA_DIR=" + filepath.Join(t.TempDir(), "data"),
		"ALICE_PASSWORD=" + dashboardPassword, "BOB_PASSWORD=" + dashboardPassword}
	r.g = startGateway(t, env, "--config", cfg)
	r.alice = strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "alice"))
	r.bob = strings.TrimSpace(runCLI(t, env, "key", "create", "--user", "bob"))
	return r
}

// callLater calls the delete tool with the official TypeScript SDK client
// as alice, in the background; the report comes once the call has ended
// (nil if the client printed none).
func (r *review) callLater(t *testing.T, path string) <-chan *clientReport {
	plan, _ := json.Marshal(clientPlan{URL: r.g.URL + "/files/mcp", Headers: map[string]string{"Authorization": "Bearer " + r.alice},
		Calls: []clientCall{{Name: "delete", Arguments: map[string]any{"path": path}}}, TimeoutMs: 110000})
	out := make(chan *clientReport, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		stdout, err := exec.CommandContext(ctx, "node", "client.mjs", string(plan)).Output()
		var rep clientReport
		if jerr := json.Unmarshal(stdout, &rep); jerr != nil {
			t.Errorf("client.mjs printed no report (%v, %v): %s", err, jerr, stdout)
			out <- nil
			return
		}
		out <- &rep
	}()
	return out
}

// result waits for the client's one call and returns its first text and
// isError.
func (r *review) result(t *testing.T, done <-chan *clientReport) (string, bool) {
	t.Helper()
	rep := <-done
	if rep == nil || rep.Error != nil || len(rep.Calls) != 1 || rep.Calls[0].Result == nil || len(rep.Calls[0].Result.Content) == 0 {
		b, _ := json.Marshal(rep)
		t.Fatalf("the client's call: %s", b)
	}
	res := rep.Calls[0].Result
	return res.Content[0].Text, res.IsError
}

// seen counts the backend's requests with exactly this body.
func (r *review) seen(body string) int {
	n := 0
	for _, b := range r.api.seen() {
		if b == body {
			n++
		}
	}
	return n
}

// decide posts a decision through the management API with key and
// returns its status.
func (r *review) decide(t *testing.T, key, id, verb string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.g.URL+"/api/v1/approvals/"+id+"/"+verb, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	status, _ := do(t, req)
	return status
}

// TestDashboardApprovals drives the approval gate end to end through the
// real binary: the official TypeScript SDK client calls a gated tool and
// waits while bob, the skill's approver (not the agent's owner), has the
// approvals queue open in headless Chromium; the call appears there by
// itself, bob approves it, and the client gets the backend's result, the
// backend having seen the exact arguments once. Then bob rejects a call
// with a reason and the client is told so; then, with JavaScript off,
// alice decides a call first through the API while bob's page still shows
// it, and bob's late decision gets the dashboard's clear 409 (as the API's
// does). The queue with a pending approval is saved as a screenshot, and
// every page is checked for console errors and requests leaving
// 127.0.0.1.
func TestDashboardApprovals(t *testing.T) {
	chromium := chromiumPath(t)
	r := newReview(t)
	shots := filepath.Join(t.TempDir(), "screenshots")
	if dir := os.Getenv("MCPGATE_SCREENSHOTS"); dir != "" {
		shots = dir
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := browser(t, chromium)
	defer cancel()
	w := &pageWatch{}
	w.listen(t, ctx)
	d := &dashboard{t: t, ctx: ctx, base: r.g.URL, shots: shots, watch: w}
	d.signInAs("bob")
	d.visit("approvals-empty", "/ui/approvals/", "Approvals")
	if note := evaluate[string](t, ctx, `document.getElementById("live-note").textContent`); note != "This list updates by itself." {
		t.Fatalf("the queue's script did not start: %q", note)
	}
	approveInBrowser(t, r, d)
	rejectInBrowser(t, r, d)
	lateInBrowser(t, r, d)
}

// approveInBrowser: the call appears in the open queue, bob approves it,
// the client gets the backend's answer.
func approveInBrowser(t *testing.T, r *review, d *dashboard) {
	done := r.callLater(t, "/tmp/a b")
	id := d.awaitApproval()
	if args := evaluate[string](t, d.ctx, fmt.Sprintf(`document.querySelector("#approval-%s pre").textContent`, id)); !strings.Contains(args, `"path": "/tmp/a b"`) {
		t.Fatalf("the queue shows the arguments as %q", args)
	}
	d.shot("approvals-pending")
	t.Logf("the approvals queue with a pending approval: %s", filepath.Join(d.shots, "approvals-pending.png"))
	browse(t, d.ctx, "approve", chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[aria-label="Approve delete (%s)"]`, id))),
		chromedp.WaitVisible(chromedp.CSS(`p.empty`)))
	if text, isErr := r.result(t, done); isErr || !strings.Contains(text, `/tmp/a b`) {
		t.Fatalf("the approved call's result: %q (isError %v)", text, isErr)
	}
	if n := r.seen(`{"path":"/tmp/a b"}`); n != 1 || len(r.api.seen()) != 1 {
		t.Fatalf("the backend saw %q; want the approved arguments once", r.api.seen())
	}
	d.watch.check(t, "approve")
}

// rejectInBrowser: bob rejects with a reason; the client is told who and
// why, and the backend sees nothing.
func rejectInBrowser(t *testing.T, r *review, d *dashboard) {
	done := r.callLater(t, "/etc")
	id := d.awaitApproval()
	browse(t, d.ctx, "reject with a reason",
		chromedp.SendKeys(chromedp.ID("reason-"+id), "not the system files"),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[aria-label="Reject delete (%s)"]`, id))),
		chromedp.WaitVisible(chromedp.CSS(`p.empty`)))
	if text, isErr := r.result(t, done); !isErr || text != "Call to delete was rejected by bob: not the system files" {
		t.Fatalf("the rejected call's result: %q (isError %v)", text, isErr)
	}
	if n := r.seen(`{"path":"/etc"}`); n != 0 {
		t.Fatalf("the backend saw a rejected call")
	}
	d.watch.check(t, "reject")
}

// lateInBrowser: with JavaScript off (so the page stays as loaded), alice
// approves through the API while bob's page shows the call; bob's reject
// then says it came too late, and so does the API (409).
func lateInBrowser(t *testing.T, r *review, d *dashboard) {
	if _, err := chromedp.Call(d.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	done := r.callLater(t, "/var/late")
	var id string
	eventually(t, func() bool {
		browse(t, d.ctx, "reload the queue", chromedp.Navigate(d.base+"/ui/approvals/"), chromedp.WaitVisible(chromedp.CSS("h1")))
		id = evaluate[string](t, d.ctx, `(document.querySelector("section.approval") || {id: "approval-"}).id.slice(9)`)
		return id != ""
	})
	if st := r.decide(t, r.alice, id, "approve"); st != http.StatusOK {
		t.Fatalf("alice approving through the API: %d", st)
	}
	// The queue has a "main p" too: wait for the answer's own heading, or
	// the check may read the queue before the answer replaced it.
	browse(t, d.ctx, "reject too late", chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[aria-label="Reject delete (%s)"]`, id))),
		chromedp.WaitVisible(chromedp.Search(`//h1[normalize-space()="Conflict"]`)))
	msg := evaluate[string](t, d.ctx, `document.querySelector("main").innerText`)
	if h1 := evaluate[string](t, d.ctx, `document.querySelector("h1").textContent`); h1 != "Conflict" || !strings.Contains(msg, "Too late: the call of delete on agent files was approved by alice at ") {
		t.Fatalf("bob's late decision in the dashboard: %q\n%s", h1, msg)
	}
	d.shot("approval-too-late")
	d.watch.expect("the server responded with a status of 409 (Conflict) " + d.base + "/ui/approvals/" + id + "/reject")
	if st := r.decide(t, r.bob, id, "reject"); st != http.StatusConflict {
		t.Fatalf("bob's late decision through the API: %d, want 409", st)
	}
	if text, isErr := r.result(t, done); isErr || !strings.Contains(text, "/var/late") || r.seen(`{"path":"/var/late"}`) != 1 {
		t.Fatalf("the call alice approved: %q (isError %v); the backend saw %q", text, isErr, r.api.seen())
	}
	d.watch.check(t, "late decision")
}

// signInAs opens the dashboard, lands on the login page and signs in as
// the user with the test's password.
func (d *dashboard) signInAs(name string) {
	browse(d.t, d.ctx, "open the dashboard", chromedp.Navigate(d.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="username"]`)))
	browse(d.t, d.ctx, "sign in as "+name,
		chromedp.SendKeys(chromedp.CSS(`input[name="username"]`), name),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), dashboardPassword),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav form.logout`)))
	d.watch.check(d.t, "sign in")
}

// awaitApproval waits, on the open queue and without reloading it, for
// the one pending approval to appear, and returns its ID.
func (d *dashboard) awaitApproval() string {
	d.t.Helper()
	browse(d.t, d.ctx, "wait for the call in the queue", chromedp.WaitVisible(chromedp.CSS(`section.approval`)))
	return strings.TrimPrefix(evaluate[string](d.t, d.ctx, `document.querySelector("section.approval").id`), "approval-")
}
