package config

import (
	"fmt"
	"strings"
)

// Count counts the changes to one kind of entry.
type Count struct {
	Created, Updated, Deleted int
}

// Changes is what an Apply changed, by kind of entry.
type Changes struct {
	Users, Agents, Skills Count
}

// Empty reports whether nothing changed.
func (c *Changes) Empty() bool { return *c == Changes{} }

// String describes the changes for the log, such as
// "users: 1 created; skills: 2 updated, 1 deleted", or "no changes".
func (c *Changes) String() string {
	var parts []string
	for _, k := range []struct {
		name string
		n    Count
	}{{"users", c.Users}, {"agents", c.Agents}, {"skills", c.Skills}} {
		if s := k.n.String(); s != "" {
			parts = append(parts, k.name+": "+s)
		}
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, "; ")
}

// String describes the non-zero counts, such as "1 created, 2 deleted".
func (n Count) String() string {
	var parts []string
	for _, p := range []struct {
		verb string
		n    int
	}{{"created", n.Created}, {"updated", n.Updated}, {"deleted", n.Deleted}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
		}
	}
	return strings.Join(parts, ", ")
}
