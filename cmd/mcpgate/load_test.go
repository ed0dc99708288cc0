package main

import "testing"

func TestLastSSEData(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"priming then response", "id: 1\nretry: 1000\ndata: \n\nevent: message\nid: 2\ndata: {\"id\":1}\n\n", `{"id":1}`},
		{"notification then response", "data: {\"method\":\"notifications/progress\"}\n\ndata: {\"result\":{}}\n\n", `{"result":{}}`},
		{"CRLF lines", "data: {\"a\":1}\r\n\r\n", `{"a":1}`},
		{"no data", ": ping\n\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(lastSSEData([]byte(tt.body))); got != tt.want {
				t.Errorf("lastSSEData = %q, want %q", got, tt.want)
			}
		})
	}
}
