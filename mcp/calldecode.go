package mcp

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// decodeCallParams decodes tools/call params into p as unmarshalParams
// does, reading the common shape by hand (see scanCallParams): decoding
// them with encoding/json's reflection cost every call ~2 % of the
// gateway's CPU. params must be the member of a message decode accepted,
// so valid JSON.
func decodeCallParams(params json.RawMessage, p *callParams) error {
	if firstByte(params) == '{' && scanCallParams(params, p) {
		return nil
	}
	var q callParams // not p: what encoding/json decodes into escapes to the heap
	err := unmarshalParams(params, &q)
	*p = q
	return err
}

// scanCallParams fills p from params, a valid JSON object, and reports
// true when encoding/json would have filled it the same: every member name
// is written without escapes, none is repeated or differs from a name of
// callParams only in case (encoding/json matches names case-insensitively
// and keeps the last of repeated members), and _meta is an object of the
// same kind, or null. Otherwise it reports false and the caller decodes
// params with encoding/json, whose answers (and errors) are the reference.
func scanCallParams(params []byte, p *callParams) bool {
	return eachMember(params, func(key, val []byte) bool {
		switch string(key) {
		case "name":
			return setOnce(&p.Name, val)
		case "arguments":
			return setOnce(&p.Arguments, val)
		case "task":
			return setOnce(&p.Task, val)
		case "_meta":
			return scanMeta(val, &p.Meta)
		}
		return !foldsTo(key, "name", "arguments", "task", "_meta")
	})
}

// scanMeta fills m from the value of _meta as scanCallParams does.
func scanMeta(val []byte, m *requestMeta) bool {
	switch {
	case m.ProgressToken != nil:
		return false // a second _meta: encoding/json would merge them
	case val[0] == 'n':
		return true
	case val[0] != '{':
		return false // encoding/json's type error says what is wrong
	}
	seen := false
	return eachMember(val, func(key, v []byte) bool {
		if string(key) == "progressToken" {
			if seen {
				return false
			}
			seen = true
			m.ProgressToken = v
			return true
		}
		return !foldsTo(key, "progressToken")
	})
}

// eachMember calls fn with each member of obj, a valid JSON object: its
// name unquoted and its value raw. It stops and reports false when fn does,
// or at a name written with an escape.
func eachMember(obj []byte, fn func(key, val []byte) bool) bool {
	i := mcpgate.SkipJSONSpace(obj, 0) + 1 // past '{'
	for {
		i = mcpgate.SkipJSONSpace(obj, i)
		switch obj[i] {
		case '}':
			return true
		case ',':
			i = mcpgate.SkipJSONSpace(obj, i+1)
		}
		end := stringEnd(obj, i)
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = mcpgate.SkipJSONSpace(obj, mcpgate.SkipJSONSpace(obj, end)+1) // past ':'
		end = valueEnd(obj, i)
		if !fn(key, obj[i:end]) {
			return false
		}
		i = end
	}
}

// setOnce stores a member's value, reporting false for a repeated member.
func setOnce(field *json.RawMessage, val []byte) bool {
	if *field != nil {
		return false
	}
	*field = val
	return true
}

// foldsTo reports whether key matches one of names as encoding/json
// matches member names (case-insensitively, with Unicode simple folding).
func foldsTo(key []byte, names ...string) bool {
	for _, name := range names {
		if strings.EqualFold(string(key), name) {
			return true
		}
	}
	return false
}
