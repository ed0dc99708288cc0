package mcpgate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRequestBodyForms(t *testing.T) {
	tests := []struct {
		in   string
		mode string
		ok   bool
	}{
		{`"all"`, BodyAll, true},
		{`"none"`, BodyNone, true},
		{`["rows","filename"]`, BodyFields, true},
		{`{"data":"{rows}"}`, BodyTemplate, true},
		{`"{items}"`, BodyTemplate, true},
		{`"some"`, "", false},
		{`"{a} and {b}"`, "", false},
		{`42`, "", false},
	}
	for _, tt := range tests {
		var b RequestBody
		err := json.Unmarshal([]byte(tt.in), &b)
		if (err == nil) != tt.ok || (tt.ok && b.Mode != tt.mode) {
			t.Errorf("%s: mode %q, err %v; want mode %q ok=%v", tt.in, b.Mode, err, tt.mode, tt.ok)
			continue
		}
		if !tt.ok {
			continue
		}
		out, err := json.Marshal(b)
		if err != nil || string(out) != tt.in {
			t.Errorf("%s marshals back as %s (%v)", tt.in, out, err)
		}
	}
}

func TestToolValidateInputSchema(t *testing.T) {
	tests := []struct {
		schema string
		want   string // "" when valid, else the end of the message
	}{
		{`{"type":"object"}`, ""},
		{`{"properties":{},"type":"object"}`, ""},
		{`null`, "input_schema must be a JSON object"},
		{`[{"type":"object"}]`, "input_schema must be a JSON object"},
		{`"object"`, "input_schema must be a JSON object"},
		{`{"type":"object"`, "input_schema must be a JSON object"},
		{`{}`, `input_schema must have "type": "object"`},
		{`{"type":["object"]}`, `input_schema must have "type": "object"`},
		{`{"type":"string"}`, `input_schema must have "type": "object"`},
	}
	for _, tt := range tests {
		err := (&Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}).Validate("")
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want valid", tt.schema, err)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || !strings.HasSuffix(ErrorMessage(err), tt.want) {
			t.Errorf("%s: %v, want EINVALID ending %q", tt.schema, err, tt.want)
		}
	}
}
