package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pipeline"
)

// approvalSignals wakes the calls waiting on an approval (the bus).
type approvalSignals interface {
	Signal(ctx context.Context, topic string)
}

// approvalEvents hears of approvals decided (the event hub).
type approvalEvents interface {
	ApprovalDecided(a *mcpgate.Approval)
}

// approvalDecider records a decision once and then wakes the waiting call
// on whichever replica it runs and publishes approval.decided.
type approvalDecider struct {
	store   mcpgate.ApprovalStore
	signals approvalSignals // nil in the CLI: the call finds it by polling
	events  approvalEvents  // optional
	logger  *slog.Logger
}

// Decide records d on approval id; ECONFLICT when it was decided already.
func (d *approvalDecider) Decide(ctx context.Context, id string, dec mcpgate.Decision) (*mcpgate.Approval, error) {
	a, err := d.store.DecideApproval(ctx, id, dec)
	if err != nil {
		return a, err
	}
	d.decided(ctx, a)
	return a, nil
}

// decided wakes the waiters of a and publishes it.
func (d *approvalDecider) decided(ctx context.Context, a *mcpgate.Approval) {
	if d.signals != nil {
		d.signals.Signal(ctx, pipeline.ApprovalTopic(a.ID))
	}
	if d.events != nil {
		d.events.ApprovalDecided(a)
	}
}

// approvalSweepEvery is how often pending approvals past their deadline
// are marked expired: those whose call is gone (a restart, a caller that
// left with an idempotency key) expire here; waiting calls expire their
// own on time.
const approvalSweepEvery = 10 * time.Second

// sweepApprovals expires overdue approvals until ctx ends.
func (m *Main) sweepApprovals(ctx context.Context) {
	tick := time.NewTicker(approvalSweepEvery)
	defer tick.Stop()
	for {
		expired, err := m.store.ExpireApprovals(ctx, time.Now(), sweepBatch)
		if err != nil && ctx.Err() == nil {
			m.logger.Warn("sweep of overdue approvals failed", "err", err)
		}
		for _, a := range expired {
			m.approvals.decided(ctx, a)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// runApprovals runs `mcpgate approvals list|approve|reject`.
func runApprovals(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "list":
			return runApprovalsList(ctx, env, args[1:])
		case "approve":
			return runApprovalDecide(ctx, env, mcpgate.ApprovalApproved, args[1:])
		case "reject":
			return runApprovalDecide(ctx, env, mcpgate.ApprovalRejected, args[1:])
		}
	}
	fmt.Fprintln(env.Stderr, "Usage: mcpgate approvals list [--state S] [--agent ID] [--limit N] [--json]\n       mcpgate approvals approve|reject ID [--reason TEXT] [--as NAME]")
	return errUsage
}

// runApprovalsList prints approvals, newest first.
func runApprovalsList(ctx context.Context, env *Env, args []string) error {
	var store storeFlags
	var f mcpgate.ApprovalFilter
	var state string
	var asJSON bool
	fs := newFlagSet(env, "approvals list", "approvals list [flags]")
	store.register(fs)
	fs.StringVar(&state, "state", "", "only approvals in this state (pending, approved, rejected, expired, withdrawn)")
	fs.StringVar(&f.AgentID, "agent", "", "only approvals of this agent")
	fs.IntVar(&f.Limit, "limit", 100, "how many, at most 1000")
	fs.BoolVar(&asJSON, "json", false, "print JSON: {approvals}")
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	f.State = mcpgate.ApprovalState(state)
	if (state != "" && !f.State.Valid()) || fs.NArg() > 0 {
		fmt.Fprintln(env.Stderr, "mcpgate approvals list: --state must be pending, approved, rejected, expired or withdrawn, and nothing may follow the flags")
		return errUsage
	}
	return withStore(ctx, env, &store, func(s mcpgate.Store) error {
		list, err := s.ListApprovals(ctx, f)
		if err != nil {
			return err
		}
		if asJSON {
			e := json.NewEncoder(env.Stdout)
			e.SetIndent("", "  ")
			return e.Encode(map[string]any{"approvals": list})
		}
		return printApprovals(env, list)
	})
}

// printApprovals writes a table of approvals.
func printApprovals(env *Env, list []*mcpgate.Approval) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUESTED\tID\tAGENT\tTOOL\tSTATE\tDEADLINE\tCALLER\tREVIEWER\tARGUMENTS")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.RequestedAt.Format(timeFmt), a.ID, a.AgentID, a.Tool, a.State,
			a.Deadline.Format(timeFmt), a.Identity, orDash(a.Reviewer), a.Arguments)
	}
	return tw.Flush()
}

// runApprovalDecide approves or rejects one approval.
func runApprovalDecide(ctx context.Context, env *Env, state mcpgate.ApprovalState, args []string) error {
	var store storeFlags
	d := mcpgate.Decision{State: state}
	verb := map[mcpgate.ApprovalState]string{mcpgate.ApprovalApproved: "approve", mcpgate.ApprovalRejected: "reject"}[state]
	fs := newFlagSet(env, "approvals "+verb, "approvals "+verb+" ID [flags]")
	store.register(fs)
	fs.StringVar(&d.Reason, "reason", "", "why, told to the caller")
	fs.StringVar(&d.Reviewer, "as", "cli", "the reviewer's name the caller is told")
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	if id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	} else if id == "" || fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "mcpgate approvals %s: give one approval ID (mcpgate approvals list shows them)\n", verb)
		return errUsage
	}
	return withStore(ctx, env, &store, func(s mcpgate.Store) error {
		dec := &approvalDecider{store: s}
		a, err := dec.Decide(ctx, id, d)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "Approval %s %s (%s on agent %s).\n", a.ID, a.State, a.Tool, a.AgentID)
		return nil
	})
}
