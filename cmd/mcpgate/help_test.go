package main

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// flagLine matches a flag in a flag set's help.
var flagLine = regexp.MustCompile(`(?m)^  -([a-z-]+)`)

// TestHelpShowsEveryFlag checks that `mcpgate help COMMAND` shows every
// command's flags, and that each flag is in the top-level help (serve's
// has a help of its own) and in the README.
func TestHelpShowsEveryFlag(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	top, _, err := runCLI(t, nil, "help")
	if err != nil || !strings.Contains(top, "--password-stdin") {
		t.Errorf("help = %v, lacking --password-stdin:\n%s", err, top)
	}
	for _, topic := range helpTopics {
		name := strings.Join(topic, " ")
		out, errOut, err := runCLI(t, nil, append([]string{"help"}, topic...)...)
		if err != nil || errOut != "" || !strings.HasPrefix(out, "Usage: mcpgate "+name) {
			t.Errorf("help %s: %v, stderr %q, stdout:\n%s", name, err, errOut, out)
			continue
		}
		for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
			flag := "--" + m[1]
			if topic[0] != "serve" && !strings.Contains(top, flag) {
				t.Errorf("the top-level help lacks %s of %s", flag, name)
			}
			if !strings.Contains(string(readme), flag) {
				t.Errorf("README.md lacks %s of %s", flag, name)
			}
		}
	}
	out, _, err := runCLI(t, nil, "help", "key")
	if err != nil || strings.Count(out, "Usage: mcpgate key ") != 5 {
		t.Errorf("help key = %v, want the help of its 5 subcommands:\n%s", err, out)
	}
	if _, errOut, err := runCLI(t, nil, "help", "frobnicate"); !errors.Is(err, errUsage) || !strings.Contains(errOut, "frobnicate") {
		t.Errorf("help frobnicate = %v, %q", err, errOut)
	}
}
