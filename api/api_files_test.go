package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// presigned is the answer to a presign request.
type presigned struct {
	FileID    string `json:"file_id"`
	UploadURL string `json:"upload_url"`
}

// mustPresign presigns an upload of size bytes with key.
func (f *apiFixture) mustPresign(tb testing.TB, key string, size int) presigned {
	tb.Helper()
	var p presigned
	f.call(tb, "POST", "/api/v1/files/presign-upload", key, fmt.Sprintf(`{"filename":"a.txt","content_type":"text/plain","size":%d}`, size)).
		want(tb, http.StatusCreated).decode(tb, &p)
	if p.FileID == "" || !strings.HasPrefix(p.UploadURL, f.http.URL+"/api/v1/files/"+p.FileID+"/content?token=") {
		tb.Fatalf("presign answered %+v", p)
	}
	return p
}

// put uploads body to url.
func put(tb testing.TB, url, body string) *apiReply {
	tb.Helper()
	req, err := http.NewRequest("PUT", url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	return doRequest(tb, req)
}

// get fetches url without a key.
func get(tb testing.TB, url string) *apiReply {
	tb.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return doRequest(tb, req)
}

func TestFileUploadDownload(t *testing.T) {
	f := mustAPIFixture(t)
	p := f.mustPresign(t, f.alice, 5)
	var meta struct {
		File struct {
			Status string `json:"status"`
		} `json:"file"`
		DownloadURL string `json:"download_url"`
	}
	f.call(t, "GET", "/api/v1/files/"+p.FileID, f.alice, "").want(t, http.StatusOK).decode(t, &meta)
	if meta.File.Status != "pending" || meta.DownloadURL != "" {
		t.Fatalf("before upload: %+v", meta)
	}
	put(t, p.UploadURL, "hello").want(t, http.StatusOK)
	put(t, p.UploadURL, "hello").wantError(t, http.StatusConflict, "conflict", "", "used already")
	f.call(t, "GET", "/api/v1/files/"+p.FileID, f.alice, "").want(t, http.StatusOK).decode(t, &meta)
	if meta.File.Status != "ready" {
		t.Fatalf("after upload: %+v", meta)
	}
	r := get(t, meta.DownloadURL).want(t, http.StatusOK)
	if r.body != "hello" || r.header.Get("Content-Type") != "text/plain" {
		t.Fatalf("download: %q, %s", r.body, r.header.Get("Content-Type"))
	}
	// The download token does not upload, nor the upload token download.
	put(t, meta.DownloadURL, "hello").want(t, http.StatusForbidden)
	get(t, p.UploadURL).want(t, http.StatusForbidden)
	// Another user's file is not found; an admin's view is allowed.
	f.call(t, "GET", "/api/v1/files/"+p.FileID, f.bob, "").want(t, http.StatusNotFound)
	f.call(t, "GET", "/api/v1/files/"+p.FileID, f.root, "").want(t, http.StatusOK)
	// A token moved onto another file's path is refused.
	other := f.mustPresign(t, f.bob, 5)
	put(t, strings.Replace(p.UploadURL, p.FileID+"/", other.FileID+"/", 1), "hello").want(t, http.StatusForbidden)
}

// TestFileUploadAgentKey: an agent key uploads as its agent's owner.
func TestFileUploadAgentKey(t *testing.T) {
	f := mustAPIFixture(t)
	p := f.mustPresign(t, f.shopKey, 3)
	put(t, p.UploadURL, "abc").want(t, http.StatusOK)
	f.call(t, "GET", "/api/v1/files/"+p.FileID, f.alice, "").want(t, http.StatusOK)
}

func TestFileUploadSizes(t *testing.T) {
	f := mustAPIFixture(t)
	f.call(t, "POST", "/api/v1/files/presign-upload", f.alice, `{"filename":"a","size":1001}`).
		wantError(t, http.StatusRequestEntityTooLarge, "too_large", "size", "upload limit of 1000")
	f.call(t, "POST", "/api/v1/files/presign-upload", f.alice, `{"filename":"a","size":0}`).
		wantError(t, http.StatusBadRequest, "invalid", "size", "at least 1")
	// Longer than declared: refused before a byte is stored.
	p := f.mustPresign(t, f.alice, 5)
	put(t, p.UploadURL, "hello!").want(t, http.StatusRequestEntityTooLarge)
	// Shorter than declared: the upload fails and its URL is spent.
	p = f.mustPresign(t, f.alice, 5)
	put(t, p.UploadURL, "hell").want(t, http.StatusBadRequest)
	put(t, p.UploadURL, "hello").want(t, http.StatusConflict)
	var meta struct {
		File struct {
			Status string `json:"status"`
		} `json:"file"`
	}
	f.call(t, "GET", "/api/v1/files/"+p.FileID, f.alice, "").want(t, http.StatusOK).decode(t, &meta)
	if meta.File.Status != "failed" {
		t.Fatalf("status %q, want failed", meta.File.Status)
	}
}
