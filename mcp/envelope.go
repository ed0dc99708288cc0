package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// envelopeNames are the members of a JSON-RPC message this package reads.
// Member names are case-sensitive: encoding/json would match "METHOD" or
// "Id" to them, so the envelope is scanned by hand instead.
var envelopeNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// decodeEnvelope fills m from obj, a JSON object already known to be valid
// JSON. Each envelope member is kept raw, as a slice of obj. A duplicate
// envelope member, or a member whose name differs from one only in case,
// makes the message invalid: which of them counts would be a guess.
func (m *message) decodeEnvelope(obj []byte) {
	i := mcpgate.SkipJSONSpace(obj, 0) + 1 // past '{'
	for {
		i = mcpgate.SkipJSONSpace(obj, i)
		switch obj[i] {
		case '}':
			return
		case ',':
			i = mcpgate.SkipJSONSpace(obj, i+1)
		}
		end := stringEnd(obj, i)
		key := obj[i:end]
		i = mcpgate.SkipJSONSpace(obj, mcpgate.SkipJSONSpace(obj, end)+1) // past ':'
		end = valueEnd(obj, i)
		m.member(key, obj[i:end])
		i = end
	}
}

// member records one member of the message; key is its quoted name.
func (m *message) member(key, val []byte) {
	name := key[1 : len(key)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		var s string
		if json.Unmarshal(key, &s) != nil {
			m.badKey(`a member name is not a valid JSON string`, false)
			return
		}
		name = []byte(s)
	}
	switch string(name) {
	case "jsonrpc":
		m.set(&m.JSONRPC, val, "jsonrpc")
	case "id":
		m.set(&m.ID, val, "id")
	case "method":
		m.set(&m.Method, val, "method")
	case "params":
		m.set(&m.Params, val, "params")
	case "result":
		m.set(&m.Result, val, "result")
	case "error":
		m.set(&m.Error, val, "error")
	default:
		m.checkCase(string(name))
	}
}

// set stores the value of an envelope member, refusing a second one.
func (m *message) set(field *json.RawMessage, val []byte, name string) {
	if *field != nil {
		m.badKey(`duplicate member "`+name+`"`, name == "id")
		return
	}
	*field = val
}

// checkCase refuses a member whose name is an envelope name in another
// case, such as "Method" or "ID" (or with Unicode case folding, "jſonrpc").
func (m *message) checkCase(name string) {
	for _, env := range envelopeNames {
		if len(name) >= len(env) && strings.EqualFold(name, env) {
			m.badKey("member names are case-sensitive: "+strconv.Quote(name)+` is not "`+env+`"`, env == "id")
			return
		}
	}
}

// badKey makes the message invalid for a problem with its member names,
// keeping the first problem found. An ambiguous id is not echoed.
func (m *message) badKey(problem string, id bool) {
	if m.problem == "" {
		m.problem = problem
	}
	m.idUnclear = m.idUnclear || id
}

// stringEnd returns the index just past the JSON string starting at b[i],
// which must be valid JSON.
func stringEnd(b []byte, i int) int {
	j := i + 1
	for {
		j += bytes.IndexByte(b[j:], '"')
		escapes := 0
		for k := j - 1; b[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return j + 1
		}
		j++
	}
}

// valueEnd returns the index just past the JSON value starting at b[i],
// which must be valid JSON.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		return compositeEnd(b, i)
	}
	j := i + 1
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// compositeEnd returns the index just past the object or array starting
// at b[i], which must be valid JSON.
func compositeEnd(b []byte, i int) int {
	depth := 0
	for j := i; ; j++ {
		switch b[j] {
		case '"':
			j = stringEnd(b, j) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
}
