package rest

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

func TestCallToolRedirect(t *testing.T) {
	headers := []string{"X-Api-Key", "X-Plain", "Content-Type"}
	tests := []struct {
		name       string
		method     string
		status     int
		sameOrigin bool
		want       received
	}{
		{"other origin drops secrets", "GET", http.StatusFound, false,
			received{Method: "GET", URI: "/final", Header: map[string]string{"X-Plain": "p-1"}}},
		{"same origin keeps secrets", "GET", http.StatusMovedPermanently, true,
			received{Method: "GET", URI: "/final", Header: map[string]string{"X-Plain": "p-1", "X-Api-Key": "k3y"}}},
		{"307 keeps the body", "POST", http.StatusTemporaryRedirect, false,
			received{Method: "POST", URI: "/final", Body: `{"v":1}`, Header: map[string]string{"X-Plain": "p-1", "Content-Type": "application/json"}}},
		{"303 turns into GET", "POST", http.StatusSeeOther, false,
			received{Method: "GET", URI: "/final", Header: map[string]string{"X-Plain": "p-1"}}},
	}
	b := New(&Options{LookupEnv: testLookup(map[string]string{"KEY": "k3y"})})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got received
			final := mustServe(t, recorder(&got, headers...))
			var first *http.Request
			start := mustServe(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/final" {
					recorder(&got, headers...)(w, r)
					return
				}
				first = r
				target := final.URL + "/final"
				if tt.sameOrigin {
					target = "/final"
				}
				http.Redirect(w, r, target, tt.status)
			})
			call := newCall(start.URL, &mcpgate.Request{Method: tt.method, Path: "/start", Headers: map[string]string{"X-Plain": "p-{n}"}}, `{"n": 1, "v": 1}`)
			call.Skill.Headers = map[string]string{"X-Api-Key": "${env:KEY}"}
			if res := mustCall(t, b, call); res.IsError {
				t.Fatalf("result is an error: %s", resultText(res))
			}
			if first == nil || first.Header.Get("X-Api-Key") != "k3y" {
				t.Errorf("the first server did not get the secret header")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request after the redirect (-want +got):\n%s", diff)
			}
		})
	}
}
