package rest

import "github.com/mcpgate/mcpgate"

// cutPlaceholder finds the first {name} in s (mcpgate.CutPlaceholder).
func cutPlaceholder(s string) (before, name, after string, found bool) {
	return mcpgate.CutPlaceholder(s)
}

// wholePlaceholder returns name when s is exactly "{name}".
func wholePlaceholder(s string) (string, bool) {
	before, name, after, ok := cutPlaceholder(s)
	return name, ok && before == "" && after == ""
}

// Placeholders returns the argument names s refers to as {name}, in order,
// each once (mcpgate.Placeholders).
func Placeholders(s string) []string { return mcpgate.Placeholders(s) }
