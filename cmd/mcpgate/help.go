package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// helpTopics are the commands whose flags `mcpgate help` shows, each as
// the arguments that run it.
var helpTopics = [][]string{
	{"serve"}, {"init"},
	{"user", "create"}, {"user", "set"}, {"user", "list"},
	{"key", "create"}, {"key", "list"}, {"key", "show"}, {"key", "set"}, {"key", "revoke"},
	{"agent", "list"}, {"agent", "show"},
	{"import", "openapi"}, {"load"}, {"calls", "list"}, {"healthcheck"},
	{"approvals", "list"}, {"approvals", "approve"}, {"approvals", "reject"},
}

// runHelp runs `mcpgate help [COMMAND [SUBCOMMAND]]`: the overview, or the
// flags of every command that starts with the given words, on stdout.
func runHelp(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stdout, usage)
		return nil
	}
	var topics [][]string
	for _, t := range helpTopics {
		if len(t) >= len(args) && slices.Equal(t[:len(args)], args) {
			topics = append(topics, t)
		}
	}
	if len(topics) == 0 {
		fmt.Fprintf(env.Stderr, "mcpgate help: no command %q\n\n%s", strings.Join(args, " "), usage)
		return errUsage
	}
	out := &Env{Stdout: env.Stdout, Stderr: env.Stdout, Stdin: env.Stdin, LookupEnv: env.LookupEnv}
	for i, t := range topics {
		if i > 0 {
			fmt.Fprintln(env.Stdout)
		}
		if err := Run(ctx, out, append(slices.Clip(t), "-h")); err != nil {
			return err
		}
	}
	return nil
}
