package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpgate/mcpgate"
)

// handleToolList lists a skill's tools.
func (s *Server) handleToolList(w http.ResponseWriter, r *http.Request, c *caller) error {
	sk, err := s.readSkill(r.Context(), c, r.PathValue("id"), r.PathValue("skill"))
	if err != nil {
		return err
	}
	tools := sk.Tools
	if tools == nil {
		tools = []*mcpgate.Tool{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
	return nil
}

// handleToolGet shows one tool.
func (s *Server) handleToolGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	sk, err := s.readSkill(r.Context(), c, r.PathValue("id"), r.PathValue("skill"))
	if err != nil {
		return err
	}
	i := toolIndex(sk, r.PathValue("tool"))
	if i < 0 {
		return noTool(sk, r.PathValue("tool"))
	}
	writeJSON(w, http.StatusOK, sk.Tools[i])
	return nil
}

// handleToolCreate adds a tool to a skill; ECONFLICT if the skill has one
// of that name.
func (s *Server) handleToolCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	var t mcpgate.Tool
	a, err := s.decodeForAgent(w, r, c, &t)
	if err != nil {
		return err
	}
	sk, err := s.editTools(r.Context(), c, a.ID, r.PathValue("skill"), func(cur *mcpgate.Skill) (int, error) {
		if toolIndex(cur, t.Name) >= 0 {
			return -1, fieldErrorf(mcpgate.ECONFLICT, "name", "skill %q has a tool %q already; PUT it to replace it", cur.Name, t.Name)
		}
		cur.Tools = append(cur.Tools, &t)
		return len(cur.Tools) - 1, nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toolView{Tool: &t, Warnings: s.logWarnings(sk)})
	return nil
}

// handleToolPut creates or replaces a tool of a skill.
func (s *Server) handleToolPut(w http.ResponseWriter, r *http.Request, c *caller) error {
	var t mcpgate.Tool
	a, err := s.decodeForAgent(w, r, c, &t)
	if err != nil {
		return err
	}
	name := r.PathValue("tool")
	if err := samePathName("name", t.Name, name); err != nil {
		return err
	}
	t.Name = name
	created := false
	sk, err := s.editTools(r.Context(), c, a.ID, r.PathValue("skill"), func(cur *mcpgate.Skill) (int, error) {
		// The edit may run again on a fresher skill: decide each time.
		i := toolIndex(cur, name)
		created = i < 0
		if created {
			cur.Tools = append(cur.Tools, &t)
			return len(cur.Tools) - 1, nil
		}
		cur.Tools[i] = &t
		return i, nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, createdOrOK(created), toolView{Tool: &t, Warnings: s.logWarnings(sk)})
	return nil
}

// handleToolDelete removes a tool from its skill. A skill keeps at least
// one tool, as in the config file: delete the skill to remove the last.
func (s *Server) handleToolDelete(w http.ResponseWriter, r *http.Request, c *caller) error {
	a, err := s.writeAgent(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	name := r.PathValue("tool")
	_, err = s.editTools(r.Context(), c, a.ID, r.PathValue("skill"), func(cur *mcpgate.Skill) (int, error) {
		i := toolIndex(cur, name)
		if i < 0 {
			return -1, noTool(cur, name)
		}
		if len(cur.Tools) == 1 {
			return -1, fieldErrorf(mcpgate.EINVALID, "tools", "%q is the last tool of skill %q, which needs at least one; delete the skill instead", name, cur.Name)
		}
		cur.Tools = slices.Delete(cur.Tools, i, i+1)
		return -1, nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// editTools changes the tools of an agent's existing skill through
// editSkill; edit changes cur in place, returns the index of the tool the
// request posted (-1 for none) and may run twice. The problems of that
// tool are reported relative to it, as the caller posted it: "request.method",
// not "tools[1].request.method". Returns ENOTFOUND when the agent has no
// such skill. It returns the skill as written.
func (s *Server) editTools(ctx context.Context, c *caller, agentID, skill string, edit func(cur *mcpgate.Skill) (int, error)) (*mcpgate.Skill, error) {
	posted := -1
	next, err := s.editSkillRaw(ctx, c, agentID, skill, func(cur *mcpgate.Skill) (*mcpgate.Skill, error) {
		if cur == nil {
			return nil, noSkill(agentID, skill)
		}
		var err error
		if posted, err = edit(cur); err != nil {
			return nil, err
		}
		return cur, nil
	})
	if posted >= 0 {
		err = relativeTo(err, fmt.Sprintf("tools[%d]", posted))
	}
	return next, skillError(err)
}

// toolView is a tool as a write answers it: with the warnings of its
// skill as written (see skillView).
type toolView struct {
	*mcpgate.Tool
	Warnings []warning `json:"warnings,omitempty"`
}

// toolIndex returns the index of a skill's named tool, or -1.
func toolIndex(sk *mcpgate.Skill, name string) int {
	return slices.IndexFunc(sk.Tools, func(t *mcpgate.Tool) bool { return t.Name == name })
}

// noSkill is ENOTFOUND for a skill an agent lacks.
func noSkill(agentID, name string) error {
	return mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q has no skill %q", agentID, name)
}

// noTool is ENOTFOUND for a tool a skill lacks.
func noTool(sk *mcpgate.Skill, name string) error {
	return mcpgate.Errorf(mcpgate.ENOTFOUND, "skill %q of agent %q has no tool %q", sk.Name, sk.AgentID, name)
}
