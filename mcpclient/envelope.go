package mcpclient

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// envelopeKeys are the members of a message the client reads; any other
// member is skipped.
var envelopeKeys = [...]string{"id", "method", "params", "result", "error"}

// decodeMessage reads one message's envelope; false for what is not a
// JSON object with members of the right types. It scans the message once
// for the five members' bounds instead of decoding it with reflection,
// and the members it returns are slices of one copy of data (the caller's
// buffer is reused for the next message). A message whose keys are
// escaped or differ from the members' names only in case, which
// encoding/json would match, goes through encoding/json as before.
func decodeMessage(data []byte) (*message, bool) {
	if !mcpgate.ValidJSON(data) {
		return nil, false
	}
	data = bytes.Clone(data)
	var m message
	i := mcpgate.SkipJSONSpace(data, 0)
	if data[i] != '{' {
		return nil, false
	}
	i = mcpgate.SkipJSONSpace(data, i+1)
	for data[i] != '}' {
		if data[i] == ',' {
			i = mcpgate.SkipJSONSpace(data, i+1)
		}
		end := stringEnd(data, i)
		key := data[i+1 : end-1]
		i = mcpgate.SkipJSONSpace(data, mcpgate.SkipJSONSpace(data, end)+1) // past the colon
		end = valueEnd(data, i)
		if !m.set(key, data[i:end]) {
			return decodeSlowly(data)
		}
		i = mcpgate.SkipJSONSpace(data, end)
	}
	return &m, !m.bad
}

// set stores the value of member key, false when the key needs
// encoding/json's matching (escaped, or another case of a member's name).
// A method that is not a string, or an error that is not an error object,
// marks m bad, which decodeMessage refuses.
func (m *message) set(key, value []byte) bool {
	switch string(key) {
	case "id":
		m.ID = value
	case "params":
		m.Params = value
	case "result":
		m.Result = value
	case "method":
		m.setMethod(value)
	case "error":
		m.setError(value)
	default:
		return !foldsToMember(key)
	}
	return true
}

// setMethod stores the method name of a string value; null leaves it as
// it was, as encoding/json does (which also writes each byte of invalid
// UTF-8 as U+FFFD: such a name goes through it).
func (m *message) setMethod(value []byte) {
	switch {
	case string(value) == "null":
	case value[0] != '"':
		m.bad = true
	case bytes.IndexByte(value, '\\') < 0 && utf8.Valid(value):
		m.Method = string(value[1 : len(value)-1])
	default:
		if json.Unmarshal(value, &m.Method) != nil {
			m.bad = true
		}
	}
}

// setError decodes an error member: null is none.
func (m *message) setError(value []byte) {
	if string(value) == "null" {
		m.Error = nil
		return
	}
	var e mcpgate.RPCError
	if value[0] != '{' || json.Unmarshal(value, &e) != nil {
		m.bad = true
		return
	}
	m.Error = &e
}

// foldsToMember reports whether key would match a member's name in
// encoding/json (escaped, or equal but for case).
func foldsToMember(key []byte) bool {
	if bytes.IndexByte(key, '\\') >= 0 {
		return true
	}
	for _, k := range envelopeKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// decodeSlowly decodes a message, a JSON object, with encoding/json
// (which would take null as an empty one).
func decodeSlowly(data []byte) (*message, bool) {
	var m message
	if i := mcpgate.SkipJSONSpace(data, 0); i == len(data) || data[i] != '{' || json.Unmarshal(data, &m) != nil {
		return nil, false
	}
	return &m, true
}

// stringEnd returns the index just past the string starting at i.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// valueEnd returns the index just past the valid JSON value starting at i.
func valueEnd(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = stringEnd(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for ; i < len(data); i++ { // a number, true, false or null
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}
