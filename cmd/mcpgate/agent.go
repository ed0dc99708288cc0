package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// runAgent runs `mcpgate agent list|show`.
func runAgent(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "Usage: mcpgate agent list | mcpgate agent show ID")
		return errUsage
	}
	switch args[0] {
	case "list":
		return runAgentList(ctx, env, args[1:])
	case "show":
		return runAgentShow(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "mcpgate agent: unknown subcommand %q\n", args[0])
	return errUsage
}

// runAgentList prints every agent.
func runAgentList(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(env, "agent list", "agent list")
	sf.register(fs)
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		agents, err := s.ListAgents(ctx, mcpgate.AgentFilter{})
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tOWNER\tMCP\tSKILLS\tTOOLS\tSOURCE")
		for _, a := range agents {
			skills, err := s.ListSkills(ctx, a.ID)
			if err != nil {
				return err
			}
			table, _ := registry.Servable(a, skills)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%d\t%d\t%s\n", a.ID, a.Name, ownerName(ctx, s, a.OwnerID), a.MCPEnabled, len(skills), len(table.Tools), a.Source)
		}
		return tw.Flush()
	})
}

// runAgentShow prints one agent with its skills and tools.
func runAgentShow(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(env, "agent show", "agent show ID")
	sf.register(fs)
	id, err := parseWithName(fs, env, args, "agent ID")
	if err != nil {
		return helpIsOK(err)
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		a, err := s.FindAgent(ctx, id)
		if err != nil {
			return err
		}
		skills, err := s.ListSkills(ctx, a.ID)
		if err != nil {
			return err
		}
		health, err := s.ListSkillHealth(ctx, a.ID)
		if err != nil {
			return err
		}
		printAgent(env, a, ownerName(ctx, s, a.OwnerID), skills, health)
		return nil
	})
}

// printAgent writes an agent's details, with the health of its upstream
// connections, the warnings of its skills (variables their secrets name
// that are not set), and the tools tools/list serves (registry.Servable),
// so an agent skill shows its chat tool and a skill left out says why.
func printAgent(env *Env, a *mcpgate.Agent, owner string, skills []*mcpgate.Skill, health []*mcpgate.SkillHealth) {
	w := env.Stdout
	table, left := registry.Servable(a, skills)
	fmt.Fprintf(w, "Agent:       %s\nName:        %s\nDescription: %s\nOwner:       %s\nMCP enabled: %v\nSource:      %s\nMCP path:    /%s/mcp\n",
		a.ID, a.Name, a.Description, owner, a.MCPEnabled, a.Source, a.ID)
	for _, sk := range skills {
		fmt.Fprintf(w, "\nSkill %s (kind %s, timeout %s, auto_approve %v)\n", sk.Name, sk.Kind, sk.CallTimeout(), sk.AutoApprove)
		printSkillTarget(w, sk)
		if h := findHealth(health, sk.Name); h != nil {
			printHealth(w, h)
		}
		for _, p := range sk.UnsetSecrets(env.LookupEnv) {
			fmt.Fprintf(w, "  warning: %s: %s; the skill's calls fail until it is set\n", p.Field, p.Msg)
		}
		if err := left[sk.Name]; err != nil {
			fmt.Fprintf(w, "  not served: %s\n", mcpgate.ErrorMessage(err))
		}
		printTools(w, table, sk)
	}
}

// printSkillTarget writes where a skill's calls go.
func printSkillTarget(w io.Writer, sk *mcpgate.Skill) {
	switch {
	case sk.BaseURL != "":
		fmt.Fprintf(w, "  base_url: %s (allow_private %v)\n", sk.BaseURL, sk.AllowPrivate)
	case sk.URL != "":
		fmt.Fprintf(w, "  upstream: %s (allow_private %v)\n", sk.URL, sk.AllowPrivate)
	case sk.Command != "":
		fmt.Fprintf(w, "  upstream: stdio %s\n", strings.Join(append([]string{sk.Command}, sk.Args...), " "))
	case sk.Kind == mcpgate.SkillAgent:
		fmt.Fprintf(w, "  delivery: %s %s\n", sk.Delivery, sk.PushURL)
	}
}

// findHealth returns the named skill's health, or nil.
func findHealth(health []*mcpgate.SkillHealth, skill string) *mcpgate.SkillHealth {
	for _, h := range health {
		if h.Skill == skill {
			return h
		}
	}
	return nil
}

// printHealth writes an upstream connection's state.
func printHealth(w io.Writer, h *mcpgate.SkillHealth) {
	fmt.Fprintf(w, "  state: %s, %d tools (as of %s)\n", h.State, h.Tools, h.UpdatedAt.Format(time.RFC3339))
	if h.ProtocolVersion != "" {
		fmt.Fprintf(w, "  protocol: %s\n", h.ProtocolVersion)
	}
	if h.LastError != "" && h.LastErrorAt != nil {
		fmt.Fprintf(w, "  last error: %s (%s)\n", h.LastError, h.LastErrorAt.Format(time.RFC3339))
	}
	if h.LastCallAt != nil {
		fmt.Fprintf(w, "  last successful call: %s\n", h.LastCallAt.Format(time.RFC3339))
	}
}

// ownerName shows a user's name, or its ID when it cannot be found.
func ownerName(ctx context.Context, s mcpgate.Store, id string) string {
	if u, err := s.FindUserByID(ctx, id); err == nil {
		return u.Name
	}
	return id
}

// printTools writes the tools a table serves from one skill, by exposed
// name.
func printTools(w io.Writer, table *registry.Table, sk *mcpgate.Skill) {
	for _, e := range table.Tools {
		if e.Skill == sk {
			fmt.Fprintf(w, "  - %s: %s\n", e.Name, firstLine(e.Tool.Description))
		}
	}
}

// firstLine returns a text's first line.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
