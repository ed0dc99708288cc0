package main

// Tests of the admin CLI, run in-process through Run with buffers for
// output and a map for the environment, on a SQLite data dir under
// t.TempDir().

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpgate/mcpgate"
)

// runCLI runs mcpgate with args and the environment vars.
func runCLI(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	env, out, errOut := newTestEnv(vars)
	err = Run(context.Background(), env, args)
	return out.String(), errOut.String(), err
}

// mustRunCLI runs mcpgate with args on the data dir and returns stdout.
func mustRunCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, err := runCLI(t, nil, append(args, "--data-dir", dir)...)
	if err != nil {
		t.Fatalf("mcpgate %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// mustSeedAgent stores an agent of the named user with one REST skill,
// as the config file or the demo would.
func mustSeedAgent(t *testing.T, dir, owner, id string) {
	t.Helper()
	ctx := context.Background()
	sf := storeFlags{dataDir: dir}
	s, err := sf.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.FindUserByName(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	a := &mcpgate.Agent{ID: id, Name: "Invoice assistant", Description: "Files invoices.\nAnd more.", OwnerID: u.ID, MCPEnabled: true, Source: mcpgate.SourceCLI}
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	sk := &mcpgate.Skill{
		AgentID: id, Name: "billing", Kind: mcpgate.SkillREST, BaseURL: "https://billing.example.com", AutoApprove: true, Source: mcpgate.SourceCLI,
		Tools: []*mcpgate.Tool{{Name: "get_invoice", Description: "Fetch one invoice.\nBy id.", InputSchema: json.RawMessage(`{"type":"object"}`), Request: &mcpgate.Request{Method: "GET", Path: "/invoices"}}},
	}
	if err := s.PutSkill(ctx, sk); err != nil {
		t.Fatal(err)
	}
}

var (
	userKeyLine  = regexp.MustCompile(`^oag_[A-Za-z0-9]{20,}\n$`)
	agentKeyLine = regexp.MustCompile(`^bak_[A-Za-z0-9]{20,}\n$`)
)

func TestCLIKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init") // admin commands refuse a data dir with no database
	if out := mustRunCLI(t, dir, "user", "create", "alice"); !regexp.MustCompile(`^usr_[0-9a-f]+\n$`).MatchString(out) {
		t.Errorf("user create printed %q, want the user's ID alone", out)
	}
	mustSeedAgent(t, dir, "alice", "invoices")
	oag := mustRunCLI(t, dir, "key", "create", "--user", "alice", "--name", "laptop")
	bak := mustRunCLI(t, dir, "key", "create", "--agent", "invoices")
	if !userKeyLine.MatchString(oag) || !agentKeyLine.MatchString(bak) {
		t.Fatalf("key create printed %q and %q, want only the key", oag, bak)
	}
	list := mustRunCLI(t, dir, "key", "list")
	for _, want := range []string{"ID", "user", "agent", "alice", "invoices", "laptop", oag[:8]} {
		if !strings.Contains(list, want) {
			t.Errorf("key list lacks %q:\n%s", want, list)
		}
	}
	for _, secret := range []string{oag, bak} {
		if strings.Contains(list, strings.TrimSpace(secret)) {
			t.Errorf("key list shows a secret:\n%s", list)
		}
	}
	checkRevoke(t, dir, strings.TrimSpace(bak))
}

// checkRevoke revokes the agent key through the CLI and checks that the
// list shows it revoked.
func checkRevoke(t *testing.T, dir, bak string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(mustRunCLI(t, dir, "key", "list", "--agent", "invoices")), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], bak[:8]) || !strings.HasSuffix(lines[1], "-") {
		t.Fatalf("key list --agent invoices:\n%s", strings.Join(lines, "\n"))
	}
	id := strings.Fields(lines[1])[0]
	_, errOut, err := runCLI(t, nil, "key", "revoke", id, "--data-dir", dir)
	if err != nil || !strings.Contains(errOut, "key "+id+" revoked") {
		t.Fatalf("key revoke: %v %q", err, errOut)
	}
	after := strings.Split(strings.TrimSpace(mustRunCLI(t, dir, "key", "list", "--agent", "invoices")), "\n")
	if strings.HasSuffix(after[1], "-") {
		t.Errorf("the revoked key is not shown revoked:\n%s", after[1])
	}
}

func TestCLIAgents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init") // admin commands refuse a data dir with no database
	mustRunCLI(t, dir, "user", "create", "alice")
	mustSeedAgent(t, dir, "alice", "invoices")
	list := mustRunCLI(t, dir, "agent", "list")
	if !regexp.MustCompile(`(?m)^invoices\s+Invoice assistant\s+alice\s+true\s+1\s+1\s+cli$`).MatchString(list) {
		t.Errorf("agent list:\n%s", list)
	}
	show := mustRunCLI(t, dir, "agent", "show", "invoices")
	for _, want := range []string{"Agent:       invoices\n", "Owner:       alice\n", "MCP path:    /invoices/mcp\n", "Skill billing (kind rest, timeout 1m0s", "  - get_invoice: Fetch one invoice.\n"} {
		if !strings.Contains(show, want) {
			t.Errorf("agent show lacks %q:\n%s", want, show)
		}
	}
}

func TestCLIErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init") // admin commands refuse a data dir with no database
	mustRunCLI(t, dir, "user", "create", "alice")
	tests := []struct {
		name    string
		args    []string
		usage   bool   // want errUsage, whose message went to stderr
		message string // else a part of the error's text
	}{
		{"no command", nil, true, ""},
		{"unknown command", []string{"frobnicate"}, true, ""},
		{"key without subcommand", []string{"key"}, true, ""},
		{"unknown key subcommand", []string{"key", "rotate"}, true, ""},
		{"key create without owner", []string{"key", "create", "--data-dir", dir}, true, ""},
		{"key create with two owners", []string{"key", "create", "--user", "alice", "--agent", "a", "--data-dir", dir}, true, ""},
		{"user create without name", []string{"user", "create", "--data-dir", dir}, true, ""},
		{"user create with two names", []string{"user", "create", "a", "b", "--data-dir", dir}, true, ""},
		{"agent show without ID", []string{"agent", "show", "--data-dir", dir}, true, ""},
		{"unknown flag", []string{"key", "list", "--bogus", "--data-dir", dir}, true, ""},
		{"serve with an argument", []string{"serve", "now"}, true, ""},
		{"key for an unknown user", []string{"key", "create", "--user", "nobody", "--data-dir", dir}, false, `user "nobody" not found`},
		{"key for an unknown agent", []string{"key", "create", "--agent", "nosuch", "--data-dir", dir}, false, `agent "nosuch" not found`},
		{"revoke an unknown key", []string{"key", "revoke", "key_0", "--data-dir", dir}, false, `key "key_0" not found`},
		{"user created twice", []string{"user", "create", "alice", "--data-dir", dir}, false, `user name "alice" is taken`},
		{"show an unknown agent", []string{"agent", "show", "nosuch", "--data-dir", dir}, false, `agent "nosuch" not found`},
		{"short password", []string{"user", "create", "bob", "--password-env", "PW", "--data-dir", dir}, false, "at least 8 characters"},
		{"--db not a DSN", []string{"user", "list", "--db", "mysql://u:secret@h/db"}, false, "give a PostgreSQL URL"},
		{"--db keyword form is not echoed", []string{"user", "list", "--db", "host=h password=secret"}, false, "give a PostgreSQL URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, map[string]string{"PW": "short"}, tt.args...)
			switch {
			case out != "":
				t.Errorf("stdout = %q, want nothing", out)
			case tt.usage && (!errors.Is(err, errUsage) || exitCode(err) != 2 || errOut == ""):
				t.Errorf("err = %v (exit %d), stderr %q; want a usage error explained on stderr", err, exitCode(err), errOut)
			case !tt.usage && (err == nil || errors.Is(err, errUsage) || exitCode(err) != 1 || !strings.Contains(err.Error(), tt.message)):
				t.Errorf("err = %v (exit %d), want one containing %q", err, exitCode(err), tt.message)
			case strings.Contains(errOut+errorText(err), "secret"):
				t.Errorf("the error shows a password: %v %s", err, errOut)
			}
		})
	}
}

// errorText is err's text, "" for nil.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCLIVersionAndHelp(t *testing.T) {
	t.Parallel()
	out, _, err := runCLI(t, nil, "version")
	want := "mcpgate " + mcpgate.Version + " (commit unknown, " + runtime.Version() + ")\n"
	if err != nil || out != want {
		t.Errorf("version = %q, %v; want %q", out, err, want)
	}
	out, _, err = runCLI(t, nil, "help")
	if err != nil || !strings.Contains(out, "mcpgate key create --user NAME") {
		t.Errorf("help = %q, %v", out, err)
	}
	out, errOut, err := runCLI(t, nil, "key", "create", "-h")
	if err != nil || out != "" || !strings.Contains(errOut, "-agent") {
		t.Errorf("key create -h: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

// TestCLIDataDirFromEnv runs in a directory of its own, so that a command
// that ignored MCPGATE_DATA_DIR would leave ./mcpgate-data behind there.
func TestCLIDataDirFromEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Chdir(t.TempDir())
	vars := map[string]string{"MCPGATE_DATA_DIR": dir}
	if _, errOut, err := runCLI(t, vars, "init"); err != nil {
		t.Fatalf("init: %v %s", err, errOut)
	}
	if _, errOut, err := runCLI(t, vars, "user", "create", "carol"); err != nil {
		t.Fatalf("user create: %v %s", err, errOut)
	}
	out, _, err := runCLI(t, vars, "key", "create", "--user", "carol")
	if err != nil || !userKeyLine.MatchString(out) {
		t.Fatalf("key create = %q, %v", out, err)
	}
	if list := mustRunCLI(t, dir, "user", "list"); !strings.Contains(list, "carol") {
		t.Errorf("user list --data-dir %s lacks carol:\n%s", dir, list)
	}
	if _, err := os.Stat("mcpgate-data"); !os.IsNotExist(err) {
		t.Errorf("./mcpgate-data exists (%v): MCPGATE_DATA_DIR was ignored", err)
	}
	// user list no longer creates a database, so the flag's winning shows
	// in the refusal naming its directory (it used to create one there).
	flagDir := filepath.Join(dir, "flag")
	if _, errOut, err := runCLI(t, vars, "user", "list", "--data-dir", flagDir); !errors.Is(err, errUsage) || !strings.Contains(errOut, flagDir) {
		t.Errorf("user list --data-dir %s = %v, %q: --data-dir did not win over MCPGATE_DATA_DIR", flagDir, err, errOut)
	}
}

// serveFlags are the serve settings TestServeFlagsFromEnv checks.
type serveFlags struct {
	Addr         string
	MaxBodyBytes int64
	AllowedHosts []string
}

func TestServeFlagsFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want serveFlags
	}{
		{"defaults", nil, nil, serveFlags{Addr: "127.0.0.1:8094", MaxBodyBytes: 4 << 20}},
		{"env", map[string]string{"MCPGATE_ADDR": "127.0.0.1:9", "MCPGATE_MAX_BODY_BYTES": "100", "MCPGATE_ALLOWED_HOSTS": "a.example.com, b.example.com"}, nil,
			serveFlags{Addr: "127.0.0.1:9", MaxBodyBytes: 100, AllowedHosts: []string{"a.example.com", "b.example.com"}}},
		{"flag over env", map[string]string{"MCPGATE_ADDR": "127.0.0.1:9"}, []string{"--addr", "127.0.0.1:10"}, serveFlags{Addr: "127.0.0.1:10", MaxBodyBytes: 4 << 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _, _ := newTestEnv(tt.vars)
			m := NewMain(env)
			if err := m.ParseFlags(tt.args); err != nil {
				t.Fatalf("ParseFlags: %v", err)
			}
			got := serveFlags{Addr: m.Config.Addr, MaxBodyBytes: m.Config.MaxBodyBytes, AllowedHosts: m.Config.AllowedHosts}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("config mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("bad env value", func(t *testing.T) {
		env, _, _ := newTestEnv(map[string]string{"MCPGATE_MAX_BODY_BYTES": "lots"})
		if err := NewMain(env).ParseFlags(nil); err == nil || !strings.Contains(err.Error(), "MCPGATE_MAX_BODY_BYTES") {
			t.Errorf("ParseFlags = %v, want an error naming MCPGATE_MAX_BODY_BYTES", err)
		}
	})
}

func TestServeRefusesBadFlagValues(t *testing.T) {
	for _, args := range [][]string{
		{"--reload-every", "0"},
		{"--reload-every", "-1s"},
		{"--max-body-bytes", "0"},
		{"--page-size", "-3"},
		{"--idempotency-ttl", "-1s"},
		{"--call-retention", "-1h"},
	} {
		var stderr strings.Builder
		m := NewMain(&Env{Stdout: io.Discard, Stderr: &stderr, LookupEnv: func(string) (string, bool) { return "", false }})
		if err := m.ParseFlags(args); !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("serve %v: err %v, stderr %q; want a usage error naming the flag", args, err, stderr.String())
		}
	}
}
