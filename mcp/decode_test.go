package mcp

import (
	"encoding/json"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		body string
		want string // kinds, or an error code
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "request"},
		{`{"jsonrpc":"2.0","id":"a\u0062","method":"ping","params":{}}`, "request"},
		{`{"jsonrpc":"2.0","id":-3,"method":"ping","params":null}`, "request"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "notification"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "response"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":1}}`, "response"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, "invalid"},
		{`{"jsonrpc":"2.0","method":null}`, "invalid"},
		{`{"jsonrpc":"2.0","method":"x","result":1}`, "invalid"},
		{`{"jsonrpc":2,"method":"x"}`, "invalid"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"result":1},1]`, "batch:request,notification,response,invalid"},
		{`[]`, "-32600"},
		{`"x"`, "-32600"},
		{`null`, "-32600"},
		{``, "-32700"},
		{`{`, "-32700"},
		{`[{]`, "-32700"},
		{`{"a":1}{}`, "-32700"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			diff(t, "classification", tt.want, classifyBody([]byte(tt.body)))
		})
	}
}

// classifyBody describes what decode made of body.
func classifyBody(body []byte) string {
	msgs, batch, rerr := decode(body)
	if rerr != nil {
		return json.Number(itoa(rerr.Code)).String()
	}
	names := []string{"invalid", "request", "notification", "response"}
	s := ""
	for i, m := range msgs {
		if i > 0 {
			s += ","
		}
		s += names[m.kind]
	}
	if batch {
		return "batch:" + s
	}
	return s
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"s","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},2]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`[]`, `{`, `"x"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, batch, rerr := decode(body)
		if rerr != nil {
			if rerr.Code != codeParseError && rerr.Code != codeInvalidRequest {
				t.Fatalf("error code %d", rerr.Code)
			}
			if rerr.Code == codeParseError && json.Valid(body) && firstByte(body) != '[' {
				t.Fatalf("valid JSON called malformed: %q", body)
			}
			return
		}
		if len(msgs) == 0 || (!batch && len(msgs) != 1) {
			t.Fatalf("%d messages, batch=%v", len(msgs), batch)
		}
		for _, m := range msgs {
			checkClassified(t, m)
		}
	})
}

// checkClassified checks that a message's kind agrees with its members.
func checkClassified(t *testing.T, m *message) {
	switch m.kind {
	case kindRequest:
		if m.ID == nil || !validID(m.ID) || m.Method == nil {
			t.Fatalf("request without a valid id or method: %+v", m)
		}
		_ = idKey(m.ID)
	case kindNotification:
		if m.ID != nil || m.Method == nil {
			t.Fatalf("notification with id or without method: %+v", m)
		}
	case kindResponse:
		if m.Method != nil || (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("bad response: %+v", m)
		}
	case kindInvalid:
		if m.problem == "" {
			t.Fatalf("invalid message without a problem: %+v", m)
		}
		_ = m.replyID()
	default:
		t.Fatalf("unknown kind %d", m.kind)
	}
}
