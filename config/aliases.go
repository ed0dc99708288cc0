package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds the YAML nodes of a file with its aliases expanded. Every
// check walks expanded values, so without a bound a few kilobytes of
// aliases of aliases stand for billions of tools to check.
const maxNodes = 1_000_000

// nodeCounter counts a document's nodes with its aliases expanded, each
// anchored value once, so the count takes time in the file's size, not in
// its expansion.
type nodeCounter struct {
	// counted holds the expanded size of each anchored node counted so
	// far, at most maxNodes+1.
	counted map[*yaml.Node]int
	// open holds the anchored nodes being counted: an alias of one of them
	// is inside its own value.
	open map[*yaml.Node]bool
	// at and msg describe the first problem found.
	at  *yaml.Node
	msg string
}

// checkNodes records a problem when the document expands beyond maxNodes
// nodes or an alias is inside the value it names, and returns whether
// there was none.
func (d *decoder) checkNodes(doc *yaml.Node) bool {
	c := &nodeCounter{counted: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	c.size(doc)
	if c.at == nil {
		return true
	}
	d.errorf(c.at, "", "%s", c.msg)
	return false
}

// size returns the number of nodes n stands for, at most maxNodes+1.
func (c *nodeCounter) size(n *yaml.Node) int {
	if n.Kind == yaml.AliasNode {
		return c.alias(n)
	}
	if v, ok := c.counted[n]; ok {
		return v
	}
	if n.Anchor != "" {
		c.open[n] = true
		defer delete(c.open, n)
	}
	total := 1
	for _, child := range n.Content {
		if total += c.size(child); total > maxNodes {
			c.over(child)
			total = maxNodes + 1
			break
		}
	}
	if n.Anchor != "" {
		c.counted[n] = total
	}
	return total
}

// alias returns the number of nodes an alias stands for.
func (c *nodeCounter) alias(n *yaml.Node) int {
	switch {
	case n.Alias == nil:
		return 1
	case c.open[n.Alias]:
		c.problem(n, "the alias *"+n.Value+" is inside the value it names; write the value out")
		return maxNodes + 1
	}
	return c.size(n.Alias)
}

// over records that the count passed maxNodes at n.
func (c *nodeCounter) over(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		c.problem(n, fmt.Sprintf("the alias *%s takes the file beyond %d YAML nodes, counting each alias as a copy of its value; use fewer aliases", n.Value, maxNodes))
		return
	}
	c.problem(n, fmt.Sprintf("the file holds more than %d YAML nodes", maxNodes))
}

// problem records the first problem.
func (c *nodeCounter) problem(at *yaml.Node, msg string) {
	if c.at == nil {
		c.at, c.msg = at, msg
	}
}
