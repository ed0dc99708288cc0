package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// fakeOpener holds files of user u1 by ID.
type fakeOpener map[string]string

func (f fakeOpener) OpenFile(_ context.Context, userID, fileID string) (io.ReadCloser, error) {
	s, ok := f[fileID]
	if !ok || userID != "u1" {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q not found", fileID)
	}
	return io.NopCloser(strings.NewReader(s)), nil
}

// multipartCall calls a tool with body multipart and two attachments,
// and returns the result and what the server read from the form.
func multipartCall(t *testing.T, files FileOpener) (*mcpgate.Result, string) {
	got := make(chan string, 1)
	srv := mustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "id=%s note=%q meta=%s attachments=%q;", r.URL.Query().Get("id"), r.FormValue("note"), r.FormValue("meta"), r.FormValue("attachments"))
		for _, fh := range r.MultipartForm.File["file"] {
			f, _ := fh.Open()
			b, _ := io.ReadAll(f)
			fmt.Fprintf(&sb, " %s(%s)=%s", fh.Filename, fh.Header.Get("Content-Type"), b)
		}
		got <- sb.String()
		w.Write([]byte("stored"))
	})
	args, _ := json.Marshal(map[string]any{"id": "7", "note": "two files", "meta": map[string]int{"n": 2},
		"attachments": []map[string]any{{"file_id": "f1"}, {"file_id": "f2"}}})
	call := newCall(srv.URL, &mcpgate.Request{Method: "POST", Path: "/upload", Query: map[string]string{"id": "{id}"},
		Body: &mcpgate.RequestBody{Mode: mcpgate.BodyMultipart}}, string(args))
	call.Caller.UserID = "u1"
	call.Attachments = []mcpgate.Attachment{{FileID: "f1", Name: "a.csv", MimeType: "text/csv", Size: 3}, {FileID: "f2", Name: `b".txt`, MimeType: "text/plain", Size: 2}}
	res := mustCall(t, New(&Options{Files: files}), call)
	select {
	case s := <-got:
		return res, s
	default:
		return res, ""
	}
}

// TestMultipartBody: a multipart body carries the unused arguments as
// fields (not attachments) and each attachment's bytes as a "file" part
// with its name and type.
func TestMultipartBody(t *testing.T) {
	res, form := multipartCall(t, fakeOpener{"f1": "a,b", "f2": "hi"})
	want := `id=7 note="two files" meta={"n":2} attachments=""; a.csv(text/csv)=a,b b_.txt(text/plain)=hi`
	if res.IsError || form != want {
		t.Fatalf("result %q, form\n%s\nwant\n%s", resultText(res), form, want)
	}
}

// TestMultipartBodyRefused: a file that cannot be opened, or a backend
// that reads no files, fails the call before any request.
func TestMultipartBodyRefused(t *testing.T) {
	for name, files := range map[string]FileOpener{"missing file": fakeOpener{"f1": "a,b"}, "no opener": nil} {
		t.Run(name, func(t *testing.T) {
			res, form := multipartCall(t, files)
			if !res.IsError || form != "" {
				t.Fatalf("result %q (error %v), server saw %q", resultText(res), res.IsError, form)
			}
		})
	}
}
