package main

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	demoKeyLine      = regexp.MustCompile(`API key:\s+(oag_[A-Za-z0-9]+)`)
	demoPasswordLine = regexp.MustCompile(`Sign in:\s+user demo, password (\S+) `)
)

// mustStartDemo runs serve --demo on dir and returns the gateway and its
// banner.
func mustStartDemo(t *testing.T, dir string) (*testGateway, string) {
	t.Helper()
	env, stdout, stderr := newTestEnv(nil)
	g := &testGateway{Main: NewMain(env), stderr: stderr}
	if err := g.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--demo", "--log-level", "warn"}); err != nil {
		t.Fatal(err)
	}
	if err := g.Run(context.Background()); err != nil {
		g.Close()
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	return g, stdout.String()
}

// TestDemoUserIsAdmin checks that serve --demo makes the demo user an
// administrator with a password printed once, so that the README's
// management example with ${env:CRM_TOKEN} works with the demo key, that a
// restart says where the password was shown, and that user set changes
// the user.
func TestDemoUserIsAdmin(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	g, banner := mustStartDemo(t, dir)
	key, password := demoKeyLine.FindStringSubmatch(banner), demoPasswordLine.FindStringSubmatch(banner)
	if key == nil || password == nil {
		g.mustClose(t)
		t.Fatalf("the first banner lacks the key or the password:\n%s", banner)
	}
	if !strings.Contains(banner, g.URL()+"/ui/ (sign in as demo)") || !strings.Contains(banner, "calls of delete_invoice wait for your approval at "+g.URL()+"/ui/approvals/") {
		t.Errorf("the banner lacks the dashboard or the approvals queue:\n%s", banner)
	}
	g.api(t, "POST", "/api/v1/agents/demo/skills", key[1], `{"name":"contacts","base_url":"https://crm.example.com/api",
		"headers":{"Authorization":"Bearer ${env:CRM_TOKEN}"},
		"tools":[{"name":"find_contact","input_schema":{"type":"object"},"request":{"method":"GET","path":"/contacts"}}]}`, http.StatusCreated)
	g.mustClose(t)

	g, banner = mustStartDemo(t, dir)
	g.mustClose(t)
	if demoPasswordLine.MatchString(banner) || !strings.Contains(banner, "password printed at first start") || !strings.Contains(banner, "mcpgate user set demo") {
		t.Errorf("the restart banner should not show a password but say where it was:\n%s", banner)
	}
	_, errOut, err := runCLI(t, map[string]string{"PW": "a new password"}, "user", "set", "demo", "--password-env", "PW", "--no-admin", "--data-dir", dir)
	if err != nil || !strings.Contains(errOut, "user demo updated: admin false, password true") {
		t.Fatalf("user set: %v %q", err, errOut)
	}
	if list := mustRunCLI(t, dir, "user", "list"); !regexp.MustCompile(`(?m)^usr_\S+\s+demo\s+false\s+true\s+demo`).MatchString(list) {
		t.Errorf("user list after user set --no-admin:\n%s", list)
	}
}

func TestUserSetErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init")
	mustRunCLI(t, dir, "user", "create", "alice")
	for _, tt := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"user", "set", "alice"}, true, "nothing to change"},
		{[]string{"user", "set", "alice", "--admin", "--no-admin"}, true, "not both"},
		{[]string{"user", "set", "nobody", "--admin"}, false, `user "nobody" not found`},
		{[]string{"user", "set", "alice", "--password-env", "UNSET"}, false, "UNSET is not set"},
	} {
		_, errOut, err := runCLI(t, nil, append(tt.args, "--data-dir", dir)...)
		if got := errOut + errorText(err); err == nil || tt.usage != (exitCode(err) == 2) || !strings.Contains(got, tt.want) {
			t.Errorf("%v: %v (exit %d) %q; want %q", tt.args, err, exitCode(err), errOut, tt.want)
		}
	}
	mustRunCLI(t, dir, "user", "set", "alice", "--admin")
	if list := mustRunCLI(t, dir, "user", "list"); !regexp.MustCompile(`(?m)^usr_\S+\s+alice\s+true\s+false`).MatchString(list) {
		t.Errorf("user list after user set --admin:\n%s", list)
	}
}
