package cluster

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// MainOptions configure Main.
type MainOptions struct {
	// Name names the package in errors and its temporary directory.
	Name string
	// NeedsPostgres, when set, skips the build without
	// MCPGATE_TEST_POSTGRES: the tests then skip, saying why.
	NeedsPostgres bool
	// NodeDir, when set, is where the Node packages the tests run are
	// installed (EnsureNodeDeps).
	NodeDir string
	// Parallel, when positive, is how many parallel tests run at once
	// unless -test.parallel was given: end-to-end tests mostly wait on
	// child processes, not on the CPU.
	Parallel int
	// Dir, when set, receives the temporary directory that holds the
	// binary, for the tests' other programs; it is removed at the end.
	Dir *string
}

// Main is the body of an end-to-end package's TestMain: it builds the
// mcpgate binary into a temporary directory, sets *binary to it, prepares
// what o asks for, runs the tests and returns their exit code.
func Main(m *testing.M, binary *string, o MainOptions) int {
	dir, err := os.MkdirTemp("", "mcpgate-"+o.Name+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*binary = filepath.Join(dir, "mcpgate")
	if o.Dir != nil {
		*o.Dir = dir
	}
	if o.NeedsPostgres && os.Getenv("MCPGATE_TEST_POSTGRES") == "" {
		return m.Run() // every test skips, saying why
	}
	if err := Build(*binary); err != nil {
		fmt.Fprintf(os.Stderr, "%s: build mcpgate: %v\n", o.Name, err)
		return 1
	}
	if o.NodeDir != "" {
		if err := EnsureNodeDeps(o.NodeDir); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", o.Name, err)
			return 1
		}
	}
	if o.Parallel > 0 {
		allowParallel(o.Parallel)
	}
	return m.Run()
}

// allowParallel lets n parallel tests run at once unless -test.parallel
// was given.
func allowParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
