package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/rest/openapi"
	"github.com/mcpgate/mcpgate/skilledit"
)

// importConfig holds the flags of `mcpgate import openapi`.
type importConfig struct {
	source, agent, skill, baseURL, prefix string
	include, exclude                      stringList
	allowPrivate                          bool
	store                                 storeFlags
}

// runImport runs `mcpgate import openapi`.
func runImport(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "openapi" {
		fmt.Fprintln(env.Stderr, "Usage: mcpgate import openapi FILE_OR_URL --agent ID --skill NAME [--include PATTERN] [--exclude PATTERN] [--base-url URL]")
		return errUsage
	}
	var c importConfig
	fs := newFlagSet(env, "import openapi", "import openapi FILE_OR_URL --agent ID --skill NAME [flags]")
	c.store.register(fs)
	fs.StringVar(&c.agent, "agent", "", "the agent that gets the skill")
	fs.StringVar(&c.skill, "skill", "", "the rest skill to create or replace with the imported tools")
	fs.Var(&c.include, "include", "import only operations whose tool name, operationId or \"METHOD /path\" matches (repeatable)")
	fs.Var(&c.exclude, "exclude", "leave out operations that match (repeatable)")
	fs.StringVar(&c.prefix, "prefix", "", "put this before each tool's name, to keep names unique on the agent")
	fs.StringVar(&c.baseURL, "base-url", "", "the API's base URL, instead of the document's servers[0]")
	fs.BoolVar(&c.allowPrivate, "allow-private", false, "let the skill (and the document's download) reach loopback and private addresses")
	var err error
	if c.source, err = parseWithName(fs, env, args[1:], "FILE_OR_URL"); err != nil {
		return helpIsOK(err)
	}
	if c.agent == "" || c.skill == "" {
		fmt.Fprintln(env.Stderr, "mcpgate import openapi: --agent and --skill are required")
		return errUsage
	}
	return withStore(ctx, env, &c.store, func(s mcpgate.Store) error { return importOpenAPI(ctx, env, s, &c) })
}

// importOpenAPI imports the document into the skill and reports what came
// in, what was left out and which secrets to set.
func importOpenAPI(ctx context.Context, env *Env, s mcpgate.Store, c *importConfig) error {
	if _, err := s.FindAgent(ctx, c.agent); err != nil {
		return err
	}
	data, err := openapi.Load(ctx, c.source, c.allowPrivate)
	if err != nil {
		return err
	}
	doc, err := openapi.Parse(data)
	if err != nil {
		return err
	}
	res, err := openapi.Import(doc, &openapi.Options{Skill: c.skill, Include: c.include, Exclude: c.exclude, BaseURL: c.baseURL, SourceURL: sourceURL(c.source)})
	if err != nil {
		return err
	}
	skill := res.Skill(c.agent, c.skill)
	skill.Prefix, skill.AllowPrivate = c.prefix, c.allowPrivate
	replace := func(*mcpgate.Skill) (*mcpgate.Skill, error) { return skill, nil }
	if _, err := skilledit.Apply(ctx, s, c.agent, c.skill, mcpgate.SourceCLI, replace); err != nil {
		return err
	}
	printImport(env, skill, res)
	return nil
}

// sourceURL is the source when it is a URL, else "".
func sourceURL(source string) string {
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		return source
	}
	return ""
}

// printImport reports an import: the tools on stdout, and each skipped
// operation (with its place in the document) as a warning on stderr.
func printImport(env *Env, skill *mcpgate.Skill, res *openapi.Result) {
	fmt.Fprintf(env.Stdout, "skill %s of agent %s: %d tools, base URL %s\n", skill.Name, skill.AgentID, len(skill.Tools), skill.BaseURL)
	for _, t := range skill.Tools {
		fmt.Fprintf(env.Stdout, "  %s\n", t.Name)
	}
	if len(res.Secrets) > 0 {
		fmt.Fprintf(env.Stdout, "set these environment variables for the gateway: %s\n", strings.Join(res.Secrets, ", "))
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(env.Stderr, "warning: skipped %s\n", s)
	}
}
