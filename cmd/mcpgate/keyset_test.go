package main

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCLIKeyExpiryShowAndSet checks key create --expires-in, key show and
// key set.
func TestCLIKeyExpiryShowAndSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init")
	mustRunCLI(t, dir, "user", "create", "alice")
	if out := mustRunCLI(t, dir, "key", "create", "--user", "alice", "--name", "laptop", "--expires-in", "90d"); !userKeyLine.MatchString(out) {
		t.Fatalf("key create --expires-in printed %q", out)
	}
	lines := strings.Split(strings.TrimSpace(mustRunCLI(t, dir, "key", "list")), "\n")
	day := time.Now().Add(90 * 24 * time.Hour).Local().Format("2006-01-02")
	if len(lines) != 2 || !strings.Contains(lines[0], "EXPIRES") || !strings.Contains(lines[1], day) {
		t.Fatalf("key list, want the key expiring on %s:\n%s", day, strings.Join(lines, "\n"))
	}
	id := strings.Fields(lines[1])[0]
	show := mustRunCLI(t, dir, "key", "show", id)
	for _, want := range []string{"Key:       " + id + "\n", "User:      alice\n", "Name:      laptop\n", "Expires:   " + day} {
		if !strings.Contains(show, want) {
			t.Errorf("key show lacks %q:\n%s", want, show)
		}
	}
	set := mustRunCLI(t, dir, "key", "set", id, "--name", "desktop", "--no-expiry")
	if !strings.Contains(set, "Name:      desktop\n") || !regexp.MustCompile(`(?m)^Expires:\s+-$`).MatchString(set) {
		t.Errorf("key set --name desktop --no-expiry:\n%s", set)
	}
	set = mustRunCLI(t, dir, "key", "set", id, "--expires-in", "12h")
	if want := time.Now().Add(12 * time.Hour).Local().Format("2006-01-02 15"); !strings.Contains(set, "Expires:   "+want) || !strings.Contains(set, "desktop") {
		t.Errorf("key set --expires-in 12h, want it to expire at %s and keep its name:\n%s", want, set)
	}
	for _, args := range [][]string{
		{"key", "set", id},
		{"key", "set", id, "--expires-in", "1d", "--no-expiry"},
		{"key", "set", id, "--expires-in", "0"},
		{"key", "create", "--user", "alice", "--expires-in", "soon"},
	} {
		if _, errOut, err := runCLI(t, nil, append(args, "--data-dir", dir)...); !errors.Is(err, errUsage) || errOut == "" {
			t.Errorf("%v: %v %q, want a usage error", args, err, errOut)
		}
	}
	if _, _, err := runCLI(t, nil, "key", "show", "key_0", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), `key "key_0" not found`) {
		t.Errorf("key show key_0: %v", err)
	}
}
