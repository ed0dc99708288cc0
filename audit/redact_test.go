package audit

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestRedact(t *testing.T) {
	schema := `{"type":"object","properties":{
		"pin_code":{"type":"string","writeOnly":true},
		"note":{"type":"string","x-sensitive":true},
		"card":{"type":"object","properties":{"cvv":{"type":"string","writeOnly":true}}},
		"rows":{"type":"array","items":{"type":"object","properties":{"ssn":{"x-sensitive":true}}}}}}`
	for _, tc := range []struct{ name, args, want string }{
		{"schema marks", `{"pin_code":"1234","note":"n","q":"x"}`, `{"note":"[REDACTED]","pin_code":"[REDACTED]","q":"x"}`},
		{"nested", `{"card":{"cvv":"999","brand":"v"},"rows":[{"ssn":"1","n":2}]}`, `{"card":{"brand":"v","cvv":"[REDACTED]"},"rows":[{"n":2,"ssn":"[REDACTED]"}]}`},
		{"names", `{"password":"p","apiKey":"k","access_token":"t","client-secret":"s","x":{"privatekey":"z"},"max_tokens":5,"keyword":"w"}`,
			`{"access_token":"[REDACTED]","apiKey":"[REDACTED]","client-secret":"[REDACTED]","keyword":"w","max_tokens":5,"password":"[REDACTED]","x":{"privatekey":"[REDACTED]"}}`},
		{"nothing secret", `{ "q" : 1.50 }`, `{ "q" : 1.50 }`},
		{"not json", `{`, ``},
	} {
		got := string(Redact(json.RawMessage(tc.args), json.RawMessage(schema)))
		if got != tc.want {
			t.Errorf("%s: Redact = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "userPassword": true, "API_KEY": true, "key": true, "refreshToken": true,
		"secret": true, "db.passwd": true, "tokens": false, "monkey": false, "keyboard": false, "name": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRedactorCaches checks that a redactor's remembered schemas and names
// give the answers of fresh ones: a schema is known by its text, so a
// tool whose schema changes is redacted by the new one.
func TestRedactorCaches(t *testing.T) {
	r := newRedactor()
	args := `{"note":"n","password":"p"}`
	for i, tc := range []struct{ schema, want string }{
		{`{"properties":{"note":{"x-sensitive":true}}}`, `{"note":"[REDACTED]","password":"[REDACTED]"}`},
		{`{"properties":{"note":{"type":"string"}}}`, `{"note":"n","password":"[REDACTED]"}`},
		{`{"properties":{"note":{"x-sensitive":true}}}`, `{"note":"[REDACTED]","password":"[REDACTED]"}`},
		{``, `{"note":"n","password":"[REDACTED]"}`},
	} {
		v, _ := decode(json.RawMessage(args))
		if got := string(r.redactDecoded(json.RawMessage(args), v, json.RawMessage(tc.schema))); got != tc.want {
			t.Errorf("%d: %s, want %s", i, got, tc.want)
		}
	}
	for i := range redactorCacheSize + 1 {
		r.secretName(fmt.Sprintf("field%d", i))
	}
	if len(r.names) > redactorCacheSize || !r.secretName("api_key") {
		t.Errorf("%d names remembered", len(r.names))
	}
}

// TestRedactEscapedMark: a mark spelled with a JSON escape still counts
// (the schema is decoded whenever its bytes hold a backslash).
func TestRedactEscapedMark(t *testing.T) {
	schema := `{"properties":{"code":{"write\u004Fnly":true}}}`
	if got := string(Redact(json.RawMessage(`{"code":"1"}`), json.RawMessage(schema))); got != `{"code":"[REDACTED]"}` {
		t.Errorf("Redact = %s, want the code redacted", got)
	}
}

// TestRedactPlainSchemaAllocs: a schema that marks nothing sensitive is not
// decoded, so redacting plain arguments allocates as little as with no
// schema at all (it used to decode the schema on every call).
func TestRedactPlainSchemaAllocs(t *testing.T) {
	args := json.RawMessage(`{"value":10,"from":"km","to":"mi"}`)
	schema := json.RawMessage(`{"type":"object","properties":{"value":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}},"required":["value","from","to"]}`)
	v, _ := decode(args)
	r := newRedactor()
	without := testing.AllocsPerRun(50, func() { r.redactDecoded(args, v, nil) })
	with := testing.AllocsPerRun(50, func() { r.redactDecoded(args, v, schema) })
	if with > without {
		t.Errorf("redacting with a plain schema: %v allocations, without a schema %v", with, without)
	}
}
