// Package skilledit holds the one validation path of a skill, whatever its
// source, and is the one way a skill of an agent changes outside the
// config file's own apply. Checker runs the skill's own checks
// (mcpgate.Skill.Check), the SSRF guard's view of its URLs, its backend's
// binding check (a BindingChecker, such as rest.Checker) and its compiled
// schemas; the config file runs the same Checker on every skill it reads.
// Apply then runs registry.Check of the agent's skills as a whole
// (ECONFLICT naming both skills of a clashing tool name), then
// store.PutSkill or DeleteSkill. The management API and `mcpgate import
// openapi` both change skills through it.
//
// It depends on the root package, registry, rest (its binding check) and
// netguard; it must not import config, a store implementation, the
// transport or the HTTP surface.
package skilledit

import (
	"context"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// Edit returns the new state of a skill from its current one (nil when it
// does not exist); a nil result deletes it. It may run twice, so it must
// not have side effects.
type Edit func(cur *mcpgate.Skill) (*mcpgate.Skill, error)

// plan is an edit applied to an agent's skills and checked.
type plan struct {
	gen  int64          // the store's generation the skills were read at
	next *mcpgate.Skill // nil: delete the skill
}

// Apply changes the skill name of agent agentID in st with edit. The
// checks, which compile every schema, run before the write transaction;
// inside it they run again only when something changed in between, so the
// single writer of SQLite is held briefly. A new skill gets source; a
// replaced one keeps its own, so a skill the config file owns stays the
// file's. It returns the new skill (nil when deleted). Errors:
// mcpgate.Problems (EINVALID) when the skill's checks refuse it, ECONFLICT for a tool
// name clash, and edit's own errors as they are.
func Apply(ctx context.Context, st mcpgate.Store, agentID, name, source string, edit Edit) (*mcpgate.Skill, error) {
	p, err := newPlan(ctx, st, agentID, name, source, edit)
	if err != nil {
		return nil, err
	}
	err = st.Tx(ctx, func(tx mcpgate.Store) error {
		gen, err := tx.Generation(ctx)
		if err != nil {
			return err
		}
		if gen != p.gen {
			if p, err = newPlan(ctx, tx, agentID, name, source, edit); err != nil {
				return err
			}
		}
		if p.next == nil {
			return tx.DeleteSkill(ctx, agentID, name)
		}
		return tx.PutSkill(ctx, p.next)
	})
	if err != nil {
		return nil, err
	}
	return p.next, nil
}

// newPlan reads the agent's skills from st, applies edit and checks the
// result.
func newPlan(ctx context.Context, st mcpgate.Store, agentID, name, source string, edit Edit) (*plan, error) {
	gen, err := st.Generation(ctx)
	if err != nil {
		return nil, err
	}
	skills, err := st.ListSkills(ctx, agentID)
	if err != nil {
		return nil, err
	}
	var cur *mcpgate.Skill
	if i := index(skills, name); i >= 0 {
		cur = skills[i]
	}
	next, err := edit(cur)
	switch {
	case err != nil:
		return nil, err
	case next == nil:
		return &plan{gen: gen}, nil
	}
	next.Source = source
	if cur != nil {
		next = cur.Replacing(next)
	}
	return &plan{gen: gen, next: next}, check(skills, next)
}

// check checks next with a Checker, and against the agent's other skills.
func check(skills []*mcpgate.Skill, next *mcpgate.Skill) error {
	if err := CheckSkill(next); err != nil {
		return err
	}
	all := append([]*mcpgate.Skill(nil), skills...)
	if i := index(all, next.Name); i >= 0 {
		all[i] = next
	} else {
		all = append(all, next)
	}
	return registry.Check(all)
}

// index returns the index of the named skill, or -1.
func index(skills []*mcpgate.Skill, name string) int {
	for i, s := range skills {
		if s.Name == name {
			return i
		}
	}
	return -1
}
