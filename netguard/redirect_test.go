package netguard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A redirect to another origin drops the headers the context names as
// secret and keeps the others; one within the origin keeps them all.
func TestRedirectDropsSecretHeaders(t *testing.T) {
	var got http.Header
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
	}))
	defer target.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/landed", http.StatusFound)
			return
		}
		if r.URL.Path == "/landed" {
			got = r.Header.Clone()
			return
		}
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusFound)
	}))
	defer origin.Close()
	client := New(nil).Client(Policy{AllowPrivate: true})
	for _, tt := range []struct {
		path       string
		wantSecret string
	}{{"/other", ""}, {"/same", "s3cret"}} {
		ctx := WithSecretHeaders(context.Background(), []string{"X-Key"})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, origin.URL+tt.path, nil)
		req.Header.Set("X-Key", "s3cret")
		req.Header.Set("X-Trace", "t1")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got.Get("X-Key") != tt.wantSecret || got.Get("X-Trace") != "t1" {
			t.Errorf("%s: redirected request had X-Key %q and X-Trace %q, want %q and t1", tt.path, got.Get("X-Key"), got.Get("X-Trace"), tt.wantSecret)
		}
	}
}
