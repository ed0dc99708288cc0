package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{`{"JSONRPC":"2.0","ID":6,"METHOD":"ping"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"ping"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "invalid"},
		{`{"jsonrpc":"2.0","jsonrpc":"2.0","method":"n"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","Params":{}}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"Error":{}}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","j\u017fonrpc":"2.0"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","jſonrpc":"2.0"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`, "request"},
		{`{"jsonrpc":"2.0","id":1,"\u006dethod":"ping","method":"ping"}`, "invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"Method":1,"id":[{"id":2}]}}`, "request"},
		{` { "jsonrpc" : "2.0" , "id" : 1 , "method" : "ping" , "x" : null } `, "request"},
		{`{"x":"a\"}b","jsonrpc":"2.0","id":1,"method":"ping","y":"c\\"}`, "request"},
		{`{"methods":1,"jsonrpc":"2.0","method":"n","i":2,"ids":3}`, "notification"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"result":1},1]`, "batch:request,notification,response,invalid"},
		{`[{"jsonrpc":"2.0","ID":1,"method":"ping"}, {"jsonrpc":"2.0","id":2,"method":"ping"}]`, "batch:invalid,request"},
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
		`{"JSONRPC":"2.0","ID":6,"METHOD":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"ping","params":{"a":"\"}"}}`,
		`[{"jsonrpc":"2.0","id":1,"id":2,"result":{}},{"jsonrpc":"2.0","\u0069d":1,"method":"x"}]`,
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
		objects := topObjects(t, body, batch)
		for i, m := range msgs {
			checkClassified(t, m)
			if objects[i] != nil {
				checkEnvelope(t, objects[i], m)
			}
		}
	})
}

// topObjects returns the JSON objects decode saw: the body, or each element
// of a batch (nil for those that are no object).
func topObjects(t *testing.T, body []byte, batch bool) [][]byte {
	if !batch {
		return [][]byte{body}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		t.Fatalf("batch that is no JSON array: %v", err)
	}
	objects := make([][]byte, len(elems))
	for i, e := range elems {
		if firstByte(e) == '{' {
			objects[i] = e
		}
	}
	return objects
}

// checkEnvelope checks decodeEnvelope against encoding/json's tokenizer:
// a message whose envelope member names are duplicated or differ in case
// from the exact ones is invalid, and every other message holds exactly
// the values of the exactly named members.
func checkEnvelope(t *testing.T, obj []byte, m *message) {
	want, ambiguous := referenceEnvelope(t, obj)
	if ambiguous {
		if m.kind != kindInvalid {
			t.Fatalf("ambiguous envelope classified as %d: %s", m.kind, obj)
		}
		return
	}
	got := map[string]json.RawMessage{}
	for name, v := range map[string]json.RawMessage{"jsonrpc": m.JSONRPC, "id": m.ID, "method": m.Method, "params": m.Params, "result": m.Result, "error": m.Error} {
		if v != nil {
			got[name] = v
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("envelope of %s (-tokenizer +decode):\n%s", obj, d)
	}
}

// referenceEnvelope walks obj's members with a json.Decoder and returns the
// envelope members by exact name, and whether one is duplicated or has a
// name that is an envelope name in another case.
func referenceEnvelope(t *testing.T, obj []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	members, ambiguous := map[string]json.RawMessage{}, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		name := tok.(string)
		for _, env := range envelopeNames {
			switch {
			case name == env && members[name] != nil:
				ambiguous = true
			case name == env:
				members[name] = v
			case strings.EqualFold(name, env):
				ambiguous = true
			}
		}
	}
	return members, ambiguous
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
