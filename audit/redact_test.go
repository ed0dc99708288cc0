package audit

import (
	"encoding/json"
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
	without := testing.AllocsPerRun(50, func() { redactDecoded(args, v, nil) })
	with := testing.AllocsPerRun(50, func() { redactDecoded(args, v, schema) })
	if with > without {
		t.Errorf("redacting with a plain schema: %v allocations, without a schema %v", with, without)
	}
}
