package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzProgressToken checks that reading a relayed request's progress
// token never panics and yields a valid token or an invalid-params error.
func FuzzProgressToken(f *testing.F) {
	f.Add([]byte(`{"_meta":{"progressToken":"p1"},"uri":"file:///a"}`))
	f.Add([]byte(`{"_meta":{"progressToken":-12}}`))
	f.Add([]byte(`{"_meta":{"progressToken":1.5}}`))
	f.Add([]byte(`{"_meta":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, params []byte) {
		token, err := parseProgressToken(params)
		if err != nil {
			if token != nil {
				t.Fatalf("token %s with error %v", token, err)
			}
			return
		}
		if token != nil && (!validID(token) || !json.Valid(token)) {
			t.Fatalf("params %s: accepted token %s", params, token)
		}
	})
}

// FuzzClientError checks that the error member of a client's response
// always becomes an error with a code, the client's own when it sent a
// well-formed error.
func FuzzClientError(f *testing.F) {
	f.Add([]byte(`{"code":-32601,"message":"no sampling","data":{"x":1}}`))
	f.Add([]byte(`{"code":"x"}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"message":"no code"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e := parseClientError(raw)
		if e == nil {
			t.Fatal("nil error")
		}
		var want struct {
			Code    *int            `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if json.Unmarshal(raw, &want) == nil && want.Code != nil && e.Code != *want.Code {
			t.Fatalf("%s: code %d, want %d", raw, e.Code, *want.Code)
		}
		if len(e.Data) > 0 && !json.Valid(e.Data) {
			t.Fatalf("%s: data %q is not JSON", raw, e.Data)
		}
	})
}
