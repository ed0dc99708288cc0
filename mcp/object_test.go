package mcp

import (
	"errors"
	"testing"
)

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		body            string
		err             error
		method, id      string // raw members
		problem         string
		idUnclear, none bool // none: params absent
	}{
		{body: ` {"jsonrpc":"2.0","method":"tools/call","params":{"a":1},"id":"x"} `, method: `"tools/call"`, id: `"x"`},
		{body: `{"jsonrpc":"2.0","method":7}`, method: `7`, none: true},
		{body: `{"jsonrpc":"2.0","method":"m","Method":"n","id":1}`, method: `"m"`, id: `1`, problem: `member names are case-sensitive: "Method" is not "method"`, none: true},
		{body: `{"jsonrpc":"2.0","method":"m","id":1,"id":2}`, method: `"m"`, id: `1`, problem: `duplicate member "id"`, idUnclear: true, none: true},
		{body: `[{"jsonrpc":"2.0","method":"m"}]`, err: ErrNotObject},
		{body: `"x"`, err: ErrNotObject},
		{body: `{"jsonrpc":`, err: ErrNotJSON},
		{body: ``, err: ErrNotJSON},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			o, err := DecodeObject([]byte(tt.body))
			if !errors.Is(err, tt.err) || (err != nil) != (o == nil) {
				t.Fatalf("DecodeObject = %+v, %v; want error %v", o, err, tt.err)
			}
			if err != nil {
				return
			}
			got := []any{string(o.Method), string(o.ID), o.Problem, o.IDUnclear, o.Params == nil}
			diff(t, "object", []any{tt.method, tt.id, tt.problem, tt.idUnclear, tt.none}, got)
		})
	}
}
