package upstream

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcpgate/mcpgate/mcpclient"
)

// withParamHeaders returns opts carrying, for a stateless upstream, the
// Mcp-Param-{Name} header of each parameter the tool's inputSchema marks
// with x-mcp-header and the arguments hold (not null): the 2026-07-28
// revision requires them and the upstream checks them against the body.
// A tool without such parameters costs one byte search.
func withParamHeaders(opts *mcpclient.CallOptions, schema, args json.RawMessage) *mcpclient.CallOptions {
	if !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return opts
	}
	var argv map[string]any
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	if d.Decode(&argv) != nil {
		return opts
	}
	o := mcpclient.CallOptions{}
	if opts != nil {
		o = *opts
	}
	h := http.Header{}
	for k, v := range o.Header {
		h[k] = v
	}
	paramHeaders(schema, argv, h)
	o.Header = h
	return &o
}

// paramHeaders sets the headers of the x-mcp-header parameters found
// under schema's properties, whose arguments are in args.
func paramHeaders(schema json.RawMessage, args map[string]any, h http.Header) {
	var sc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &sc) != nil {
		return
	}
	for key, sub := range sc.Properties {
		var p struct {
			Header *string `json:"x-mcp-header"`
		}
		_ = json.Unmarshal(sub, &p)
		v, ok := args[key]
		if !ok || v == nil {
			continue
		}
		if p.Header != nil {
			if s, ok := headerText(v); ok {
				h.Set("Mcp-Param-"+*p.Header, s)
			}
		}
		if obj, ok := v.(map[string]any); ok {
			paramHeaders(sub, obj, h)
		}
	}
}

// headerText is an argument as its header value: a string as it is when
// it is visible ASCII (else in the =?base64?…?= form), a number as
// written, a boolean as true or false; false for other kinds.
func headerText(v any) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	case string:
		for i := range len(v) {
			if c := v[i]; c < 0x20 || c > 0x7e {
				return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?=", true
			}
		}
		if len(v) > 0 && (v[0] == ' ' || v[len(v)-1] == ' ') {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?=", true
		}
		return v, true
	}
	return "", false
}
