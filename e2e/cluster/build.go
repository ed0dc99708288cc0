package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Module is the import path of the mcpgate command that Build compiles.
const Module = "github.com/mcpgate/mcpgate/cmd/mcpgate"

// Build compiles mcpgate to out, with the race detector when the test
// binary calling it was built with it, so the replicas are checked too.
func Build(out string) error {
	args := []string{"build", "-o", out}
	if RaceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, Module)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// EnsureNodeDeps runs npm ci in dir (the directory holding the tests'
// package.json, e2e/) unless node_modules already holds exactly the pinned
// versions of its dependencies.
func EnsureNodeDeps(dir string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node not found: the end-to-end tests drive the official MCP TypeScript SDK; install Node.js 20 or later")
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return err
	}
	if installed(dir, pkg.Dependencies) {
		return nil
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w", dir, err)
	}
	return nil
}

// installed reports whether dir's node_modules holds exactly the pinned
// versions.
func installed(dir string, deps map[string]string) bool {
	for name, want := range deps {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		var have struct {
			Version string `json:"version"`
		}
		if err != nil || json.Unmarshal(b, &have) != nil || have.Version != want {
			return false
		}
	}
	return true
}

// runCLI runs binary with args and env and returns its stdout; the error
// carries stderr.
func runCLI(binary string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("mcpgate %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// BuildPackage compiles the Go main package pkg (an import path) to out:
// the test's own helpers, such as an upstream MCP server or an agent
// worker.
func BuildPackage(out, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
