package mcpgate

import (
	"encoding/json"
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
