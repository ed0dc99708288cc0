package main

import (
	"fmt"
	"runtime"

	"github.com/mcpgate/mcpgate"
)

// runVersion prints the version.
func runVersion(env *Env) error {
	commit := mcpgate.Commit
	if commit == "" {
		commit = "unknown"
	}
	fmt.Fprintf(env.Stdout, "mcpgate %s (commit %s, %s)\n", mcpgate.Version, commit, runtime.Version())
	return nil
}
