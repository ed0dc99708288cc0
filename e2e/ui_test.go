package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// pageWatch collects what the browser did that a dashboard page must not:
// console errors, uncaught exceptions, and requests to anywhere but
// 127.0.0.1.
type pageWatch struct {
	mu       sync.Mutex
	problems []string
	requests int // since the last check, so that a silent listener fails
}

// listen starts watching the browser's tab.
func (p *pageWatch) listen(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				p.add(fmt.Sprintf("console.error at %s", p.where(e.StackTrace)))
			}
		case *runtime.EventExceptionThrown:
			p.add("exception: " + e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				p.add(fmt.Sprintf("console error (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			p.mu.Lock()
			p.requests++
			p.mu.Unlock()
			if u, err := url.Parse(e.Request.URL); err != nil || u.Hostname() != "127.0.0.1" {
				p.add("request outside 127.0.0.1: " + e.Request.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (p *pageWatch) where(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return "?"
	}
	return st.CallFrames[0].URL
}

func (p *pageWatch) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, s)
}

// expect drops the problems that contain what, which the test caused on
// purpose (an error page's status, which Chromium reports as a console
// error).
func (p *pageWatch) expect(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = slices.DeleteFunc(p.problems, func(s string) bool { return strings.Contains(s, what) })
}

// check fails the test with what went wrong on the page, and starts over.
func (p *pageWatch) check(t *testing.T, page string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.problems {
		t.Errorf("%s: %s", page, s)
	}
	if p.requests == 0 {
		t.Errorf("%s: the browser reported no requests: the watch is deaf", page)
	}
	p.problems, p.requests = nil, 0
}

// dashboardPassword is the demo user's password in the dashboard test.
const dashboardPassword = "correct horse battery staple"

// TestDashboard drives the dashboard of the real binary in headless
// Chromium, with JavaScript on and then off: signs in through the shared
// login page, visits every page (saving a screenshot of each under the
// test's temp dir, or MCPGATE_SCREENSHOTS, and checking it for console
// errors and requests that leave 127.0.0.1), creates a key and uses it,
// revokes it, and switches an agent's MCP endpoint off and on.
func TestDashboard(t *testing.T) {
	chromium := chromiumPath(t)
	dataDir := t.TempDir()
	runCLI(t, nil, "init", "--data-dir", dataDir) // admin commands refuse a data dir with no database
	runCLI(t, []string{"MCPGATE_E2E_PASSWORD=" + dashboardPassword},
		"user", "create", "demo", "--admin", "--password-env", "MCPGATE_E2E_PASSWORD", "--data-dir", dataDir)
	g := startGateway(t, nil, "--demo", "--data-dir", dataDir)
	waitFor(t, g.stdout.String, "Dashboard: "+g.URL+"/ui/")
	shots := filepath.Join(t.TempDir(), "screenshots")
	if dir := os.Getenv("MCPGATE_SCREENSHOTS"); dir != "" {
		shots = dir // to keep them after the test
	}
	t.Logf("dashboard screenshots: %s", shots)
	for _, script := range []bool{true, false} {
		name := map[bool]string{true: "javascript", false: "no-javascript"}[script]
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(shots, name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			driveDashboard(t, chromium, g.URL, dir, script)
		})
	}
}

// driveDashboard signs in, visits every page, makes and revokes a key and
// switches MCP, in a fresh browser with JavaScript on or off.
func driveDashboard(t *testing.T, chromium, base, shots string, script bool) {
	ctx, cancel := browser(t, chromium)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !script}); err != nil {
		t.Fatal(err)
	}
	w := &pageWatch{}
	w.listen(t, ctx)
	d := &dashboard{t: t, ctx: ctx, base: base, shots: shots, watch: w}
	d.signIn()
	for _, p := range []struct{ name, path, h1 string }{
		{"overview", "/ui/", "Overview"}, {"agents", "/ui/agents/", "Agents"},
		{"agent", "/ui/agents/demo/", "Agent demo"}, {"keys", "/ui/keys/", "API keys"},
		{"oauth", "/ui/oauth/", "OAuth clients"}, {"users", "/ui/users/", "Users"},
		{"calls", "/ui/calls/", "Calls"}, {"approvals", "/ui/approvals/", "Approvals"},
	} {
		d.visit(p.name, p.path, p.h1)
	}
	// The one script adds copy buttons: there with JavaScript, not without.
	d.visit("agent", "/ui/agents/demo/", "Agent demo")
	if n := evaluate[int](t, ctx, `document.querySelectorAll(".copy-button").length`); (n > 0) != script {
		t.Errorf("JavaScript %v: %d copy buttons", script, n)
	}
	d.keyRoundTrip()
	d.switchMCP()
	d.byKeyboard()
	d.onPhone("/ui/agents/demo/", "/ui/keys/", "/ui/users/")
}

// byKeyboard checks the page starts with the skip link, then switches
// MCP off and on with Tab and Enter alone.
func (d *dashboard) byKeyboard() {
	t := d.t
	for _, state := range []string{"off", "on"} {
		browse(t, d.ctx, "open the agent", chromedp.Navigate(d.base+"/ui/agents/demo/"), chromedp.WaitVisible(chromedp.CSS("h1")),
			chromedp.KeyEvent(kb.Tab))
		if first := evaluate[string](t, d.ctx, `document.activeElement.textContent`); first != "Skip to content" {
			t.Fatalf("the first Tab focuses %q, want the skip link", first)
		}
		for i := 0; i < 40 && evaluate[string](t, d.ctx, `document.activeElement.id`) != "mcp-toggle"; i++ {
			browse(t, d.ctx, "Tab", chromedp.KeyEvent(kb.Tab))
		}
		browse(t, d.ctx, "Enter on the MCP switch", chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(chromedp.Search(fmt.Sprintf(`//strong[@id="mcp-state" and text()=%q]`, state))))
	}
	d.watch.check(t, "keyboard")
}

// onPhone opens pages at a phone's width (390 CSS pixels, mobile
// viewport) and checks that none scrolls sideways as a whole (wide tables
// and schemas scroll in their own boxes).
func (d *dashboard) onPhone(paths ...string) {
	t := d.t
	if _, err := chromedp.Call(d.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 390, Height: 844, DeviceScaleFactor: 2, Mobile: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		browse(t, d.ctx, "open "+p+" on a phone", chromedp.Navigate(d.base+p), chromedp.WaitVisible(chromedp.CSS("h1")))
		if wide := evaluate[bool](t, d.ctx, `document.documentElement.scrollWidth > window.innerWidth`); wide {
			t.Errorf("%s scrolls sideways on a phone", p)
		}
		d.shot("phone-" + strings.Trim(strings.ReplaceAll(p, "/", "-"), "-"))
	}
	d.watch.check(t, "phone")
}

// dashboard is the browser on the gateway's dashboard.
type dashboard struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
	watch *pageWatch
}

// signIn opens the dashboard, lands on the login page and signs in.
func (d *dashboard) signIn() {
	browse(d.t, d.ctx, "open the dashboard", chromedp.Navigate(d.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="username"]`)))
	d.shot("signin")
	browse(d.t, d.ctx, "sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name="username"]`), "demo"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), dashboardPassword),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav form.logout`)))
	if h1 := evaluate[string](d.t, d.ctx, `document.querySelector("h1").textContent`); h1 != "Overview" {
		d.t.Fatalf("after sign-in: %q, want the overview", h1)
	}
	d.watch.check(d.t, "signin")
}

// visit opens a page, checks its heading, saves its screenshot and checks
// the browser saw nothing wrong.
func (d *dashboard) visit(name, path, h1 string) {
	d.t.Helper()
	browse(d.t, d.ctx, "open "+path, chromedp.Navigate(d.base+path), chromedp.WaitVisible(chromedp.CSS("h1")))
	if got := evaluate[string](d.t, d.ctx, `document.querySelector("h1").textContent`); got != h1 {
		d.t.Errorf("%s: heading %q, want %q", path, got, h1)
	}
	if css := evaluate[bool](d.t, d.ctx, `getComputedStyle(document.querySelector("header")).backgroundColor !== "rgba(0, 0, 0, 0)"`); !css {
		d.t.Errorf("%s: the stylesheet did not apply", path)
	}
	d.shot(name)
	d.watch.check(d.t, path)
}

// shot saves a full-page screenshot.
func (d *dashboard) shot(name string) {
	d.t.Helper()
	png, err := chromedp.Run(d.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		d.t.Fatalf("screenshot of %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(d.shots, name+".png"), png, 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// keyRoundTrip creates a key on the keys page, uses it, revokes it and
// sees it refused.
func (d *dashboard) keyRoundTrip() {
	t := d.t
	browse(t, d.ctx, "create a key", chromedp.Navigate(d.base+"/ui/keys/"),
		chromedp.SendKeys(chromedp.ID("key-name"), "from the browser"),
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Create key"]`)),
		chromedp.WaitVisible(chromedp.ID("new-key")))
	d.shot("key-created")
	key := evaluate[string](t, d.ctx, `document.getElementById("new-key").value`)
	if !strings.HasPrefix(key, "oag_") {
		t.Fatalf("new key %q", key)
	}
	if code := agentStatus(t, d.base, key, "demo"); code != http.StatusOK {
		t.Fatalf("the new key reads agent demo: %d, want 200", code)
	}
	hint := key[:8] + "…"
	browse(t, d.ctx, "revoke the key",
		chromedp.Navigate(d.base+"/ui/keys/"),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[aria-label="Revoke key %s"]`, hint))),
		// The next page, not the one clicked on: it shows this key revoked
		// (another run's key may be shown revoked already).
		chromedp.WaitVisible(chromedp.Search(fmt.Sprintf(`//tr[td/code[normalize-space()=%q]]/td[starts-with(normalize-space(), "revoked")]`, hint))))
	if code := agentStatus(t, d.base, key, "demo"); code != http.StatusUnauthorized {
		t.Fatalf("the revoked key reads agent demo: %d, want 401", code)
	}
	d.watch.check(t, "keys")
}

// switchMCP turns agent demo's MCP endpoint off and on from its page,
// checking the stored state through the management API.
func (d *dashboard) switchMCP() {
	t := d.t
	key := d.apiKey()
	for _, want := range []bool{false, true} {
		state := map[bool]string{true: "on", false: "off"}[want]
		browse(t, d.ctx, "switch MCP "+state,
			chromedp.Navigate(d.base+"/ui/agents/demo/"), chromedp.Click(chromedp.ID("mcp-toggle")),
			chromedp.WaitVisible(chromedp.Search(fmt.Sprintf(`//strong[@id="mcp-state" and text()=%q]`, state))))
		if agentEnabled(t, d.base, key, "demo") != want {
			t.Fatalf("after switching MCP %s in the dashboard, the API says otherwise", state)
		}
		if !want {
			d.shot("agent-mcp-off")
		}
	}
	d.watch.check(t, "agent")
}

// apiKey makes a key in the dashboard for the management API checks.
func (d *dashboard) apiKey() string {
	browse(d.t, d.ctx, "create a key", chromedp.Navigate(d.base+"/ui/keys/"),
		chromedp.Click(chromedp.Search(`//button[normalize-space()="Create key"]`)),
		chromedp.WaitVisible(chromedp.ID("new-key")))
	return evaluate[string](d.t, d.ctx, `document.getElementById("new-key").value`)
}

// agentStatus is the management API's status for GET /api/v1/agents/ID.
func agentStatus(t *testing.T, base, key, id string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/agents/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	code, _ := do(t, req)
	return code
}

// agentEnabled reads an agent's mcp_enabled through the management API.
func agentEnabled(t *testing.T, base, key, id string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/agents/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	code, body := do(t, req)
	var a struct {
		MCPEnabled bool `json:"mcp_enabled"`
	}
	if err := json.Unmarshal(body, &a); err != nil || code != http.StatusOK {
		t.Fatalf("GET agent %s: %d %s", id, code, body)
	}
	return a.MCPEnabled
}
