package rest

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestWriteJSONString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnew\nline\x00\x1f",
		"é ü 日本", "\u2028\u2029", "bad \xff utf-8", "\x7f",
	} {
		var buf bytes.Buffer
		WriteJSONString(&buf, s)
		want, _ := json.Marshal(s)
		if buf.String() != string(want) {
			t.Errorf("%q: wrote %s, encoding/json writes %s", s, buf.String(), want)
		}
	}
}
