package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A listing of the rows of one owner's agents (calls, approvals, tasks,
// newest first, for a user's own view) reads them one branch per agent:
// each branch the agent's newest rows through its (agent_id, time) index,
// at most a page of them, and the branches merged newest first. Selected
// by agent_id IN the owner's agents, no index had the owner's rows in
// order: PostgreSQL planned a read of the whole table (a Seq Scan in the
// generic plan of a new database) and SQLite read every row of the
// owner's agents, to sort them for one page.
//
// On PostgreSQL, once the table is analyzed, each branch reads its
// agent's newest rows in order (Incremental Sort on the index's time) and
// Merge Append stops at the page, so a page reads about a page and one row
// an agent; before the first analyze, whose generic plan counts a row an
// agent, each branch sorts its agent's rows, still through the index. On
// SQLite each branch reads at most a page and sorts it again for the
// merge. The owner's agents are read first, in a statement of their own;
// an owner of more than maxAgentBranches agents is listed by agent_id IN
// its agents, as before.

// maxAgentBranches bounds the branches of a listing of one owner's rows.
const maxAgentBranches = 64

// listing is a table listed newest first by (column, id).
type listing struct {
	table, columns, column string
}

// agentBranches are the agents whose rows a listing reads branch by
// branch, when on.
type agentBranches struct {
	on     bool
	agents []string
}

// ownerBranches returns the branches of a listing of the rows of
// *ownerID's agents, and clears *ownerID when they are on (the branches
// select the owner's rows); off when *ownerID is empty, when branch is
// false (the filter names one agent, whose index leads to its rows, or
// selects rows besides the owner's), or when the owner has more than
// maxAgentBranches agents.
func (s *Store) ownerBranches(ctx context.Context, owner *string, branch bool) (agentBranches, error) {
	ownerID := *owner
	if ownerID == "" || !branch {
		return agentBranches{}, nil
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM agents WHERE owner_id = $1 ORDER BY id LIMIT `+
		strconv.Itoa(maxAgentBranches+1), ownerID)
	if err != nil {
		return agentBranches{}, fmt.Errorf("agents of %s: %w", ownerID, err)
	}
	agents, err := collect(rows, scanID)
	if err != nil {
		return agentBranches{}, fmt.Errorf("agents of %s: %w", ownerID, err)
	}
	b := agentBranches{on: len(agents) <= maxAgentBranches, agents: agents}
	if b.on {
		*owner = ""
	}
	return b, nil
}

// empty reports whether the listing selects no row: it is branched and
// the owner has no agent.
func (b agentBranches) empty() bool {
	return b.on && len(b.agents) == 0
}

// query returns the SELECT of l's rows that w selects, newest first and
// without its LIMIT, and its arguments. Branched, it is one branch per
// agent, each of at most perAgent rows, merged.
func (b agentBranches) query(l listing, w *where, perAgent int) (string, []any) {
	order := ` ORDER BY ` + l.column + ` DESC, id DESC`
	if !b.on {
		return `SELECT ` + l.columns + ` FROM ` + l.table + w.String() + order, w.args
	}
	args := slices.Clone(w.args)
	branches := make([]string, len(b.agents))
	for i, agent := range b.agents {
		args = append(args, agent)
		bw := &where{conds: append([]string{"agent_id = $" + strconv.Itoa(len(args))}, w.conds...)}
		branches[i] = fmt.Sprintf(`SELECT * FROM (SELECT %s FROM %s%s%s LIMIT %d) AS b%d`,
			l.columns, l.table, bw.String(), order, perAgent, i+1)
	}
	return strings.Join(branches, ` UNION ALL `) + order, args
}
