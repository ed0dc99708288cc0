package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// Redacted replaces a sensitive value in the log.
const Redacted = "[REDACTED]"

// Redact returns args with the values of sensitive properties replaced by
// Redacted, at any depth: properties whose schema says writeOnly: true or
// x-sensitive: true, and properties whose name looks secret (a word such as
// password, token, secret or key). Arguments that are not a JSON object are
// returned as they are, unless they are not JSON at all (then nil).
func Redact(args, schema json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return args
	}
	v, ok := decode(args)
	if !ok {
		return nil
	}
	return newRedactor().redactDecoded(args, v, schema)
}

// decode decodes JSON with numbers kept as json.Number.
func decode(raw json.RawMessage) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	return v, d.Decode(&v) == nil
}

// redactorCacheSize bounds each of a redactor's caches; a full cache is
// emptied and filled anew.
const redactorCacheSize = 1024

// redactor redacts arguments, remembering each input schema decoded and
// each property name judged, which the same tools' calls meet again and
// again. It is not safe for concurrent use: the log's writer owns one.
type redactor struct {
	schemas map[string]map[string]any // by the schema's JSON text
	names   map[string]bool           // SecretName by name
}

// newRedactor returns a redactor with empty caches.
func newRedactor() *redactor {
	return &redactor{schemas: map[string]map[string]any{}, names: map[string]bool{}}
}

// redactDecoded is Redact of args decoded as v, which it may change.
func (r *redactor) redactDecoded(args json.RawMessage, v any, schema json.RawMessage) json.RawMessage {
	if !r.redactValue(v, r.schema(schema)) {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// schema returns the decoded input schema; nil when there is none or it
// does not decode (then names decide alone).
func (r *redactor) schema(raw json.RawMessage) map[string]any {
	if !marksSensitive(raw) {
		return nil
	}
	if s, ok := r.schemas[string(raw)]; ok {
		return s
	}
	var s map[string]any
	_ = json.Unmarshal(raw, &s)
	if len(r.schemas) >= redactorCacheSize {
		clear(r.schemas)
	}
	r.schemas[string(raw)] = s
	return s
}

// secretName is SecretName, remembered.
func (r *redactor) secretName(name string) bool {
	if secret, ok := r.names[name]; ok {
		return secret
	}
	secret := SecretName(name)
	if len(r.names) >= redactorCacheSize {
		clear(r.names)
	}
	r.names[name] = secret
	return secret
}

// marksSensitive reports whether a schema may mark a property sensitive,
// from its bytes: when neither keyword nor any escape is in them, decoding
// the schema (the largest cost of an audit record) would find no mark, and
// the names decide alone.
func marksSensitive(schema json.RawMessage) bool {
	return bytes.Contains(schema, []byte("writeOnly")) || bytes.Contains(schema, []byte("x-sensitive")) ||
		bytes.IndexByte(schema, '\\') >= 0
}

// redactValue redacts inside v in place and reports whether it changed.
func (r *redactor) redactValue(v any, schema map[string]any) bool {
	switch v := v.(type) {
	case map[string]any:
		return r.redactObject(v, schema)
	case []any:
		items, _ := schema["items"].(map[string]any)
		changed := false
		for _, e := range v {
			changed = r.redactValue(e, items) || changed
		}
		return changed
	}
	return false
}

// redactObject redacts an object's sensitive members.
func (r *redactor) redactObject(obj map[string]any, schema map[string]any) bool {
	props, _ := schema["properties"].(map[string]any)
	changed := false
	for name, val := range obj {
		ps, _ := props[name].(map[string]any)
		if sensitiveSchema(ps) || r.secretName(name) {
			obj[name] = Redacted
			changed = true
			continue
		}
		changed = r.redactValue(val, ps) || changed
	}
	return changed
}

// sensitiveSchema reports whether a property's schema marks its value
// sensitive.
func sensitiveSchema(s map[string]any) bool {
	return s["writeOnly"] == true || s["x-sensitive"] == true
}

// secretWords are the words of a name that say its value is a secret.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "passphrase": true, "secret": true,
	"token": true, "key": true, "apikey": true, "credential": true, "credentials": true,
	"authorization": true, "auth": true, "cookie": true, "otp": true, "pin": true,
}

// SecretName reports whether a property name looks like it holds a
// secret: one of its words (split at '_', '-', '.', spaces and camelCase
// humps) is password, token, secret, key or alike, or ends in one
// (privatekey, accesstoken).
func SecretName(name string) bool {
	for _, w := range words(name) {
		if secretWords[w] {
			return true
		}
		for _, suffix := range []string{"password", "secret", "token", "apikey", "privatekey"} {
			if strings.HasSuffix(w, suffix) {
				return true
			}
		}
	}
	return false
}

// words splits a name into lower-case words.
func words(name string) []string {
	var out []string
	var cur []rune
	prevLower := false
	for _, r := range name {
		split := !unicode.IsLetter(r) && !unicode.IsDigit(r)
		if split || (unicode.IsUpper(r) && prevLower) {
			if len(cur) > 0 {
				out = append(out, string(cur))
			}
			cur = cur[:0]
			if split {
				prevLower = false
				continue
			}
		}
		cur = append(cur, unicode.ToLower(r))
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}
