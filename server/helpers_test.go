package server

import (
	"io"
	"net/http"
	"testing"
)

// reply is an HTTP response read whole.
type reply struct {
	status int
	header http.Header
	body   string
}

// doRequest sends req and reads the whole reply.
func doRequest(tb testing.TB, req *http.Request) *reply {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return &reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}
