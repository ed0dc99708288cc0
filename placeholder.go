package mcpgate

import (
	"slices"
	"strings"
)

// CutPlaceholder finds the first {name} in s, where a name is a letter or
// '_' followed by letters, digits, '_', '.' or '-'. Braces around anything
// else, such as ${env:NAME}, are literal text.
func CutPlaceholder(s string) (before, name, after string, found bool) {
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		open := i + j
		end := open + 1
		for end < len(s) && isNameByte(s[end], end == open+1) {
			end++
		}
		if end > open+1 && end < len(s) && s[end] == '}' {
			return s[:open], s[open+1 : end], s[end+1:], true
		}
		i = open + 1
	}
	return s, "", "", false
}

// isNameByte reports whether c may appear in a placeholder's name.
func isNameByte(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		return true
	case '0' <= c && c <= '9', c == '.', c == '-':
		return !first
	}
	return false
}

// Placeholders returns the argument names s refers to as {name}, in order,
// each once.
func Placeholders(s string) []string {
	var names []string
	for {
		_, name, after, ok := CutPlaceholder(s)
		if !ok {
			return names
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		s = after
	}
}

// ValidToken reports whether name is an HTTP token (RFC 9110), as header
// names and methods must be.
func ValidToken(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
