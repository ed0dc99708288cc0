package rest

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// FileOpener reads the bytes of files handed to a call (files.Results).
type FileOpener interface {
	// OpenFile opens a ready file of user userID; ENOTFOUND when it is
	// missing or another user's.
	OpenFile(ctx context.Context, userID, fileID string) (io.ReadCloser, error)
}

// multipartFileField names the form parts that carry attachments.
const multipartFileField = "file"

// multipartBody returns a multipart/form-data body streamed as it is
// read, and its content type: the arguments not used in the URL or
// headers (but attachments) as fields, strings as they are and other
// values as JSON text, then each of the call's attachments as a file part.
// The files are opened first, so a missing one fails the call before the
// request is sent.
func (b *Backend) multipartBody(ctx context.Context, call *mcpgate.Call, e *expander) (io.Reader, string, error) {
	if len(call.Attachments) > 0 && b.files == nil {
		return nil, "", mcpgate.Errorf(mcpgate.EINVALID, "this gateway cannot send files in a multipart body")
	}
	opened := make([]io.ReadCloser, 0, len(call.Attachments))
	for _, a := range call.Attachments {
		rc, err := b.files.OpenFile(ctx, call.Caller.UserID, a.FileID)
		if err != nil {
			closeAll(opened)
			return nil, "", mcpgate.Errorf(mcpgate.EINVALID, "attachment %q: %s", a.FileID, mcpgate.ErrorMessage(err))
		}
		opened = append(opened, rc)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		defer closeAll(opened)
		pw.CloseWithError(writeParts(mw, e, call.Attachments, opened))
	}()
	return pr, mw.FormDataContentType(), nil
}

// writeParts writes the fields, then the files, and closes the form.
func writeParts(mw *multipart.Writer, e *expander, as []mcpgate.Attachment, files []io.ReadCloser) error {
	names := make([]string, 0, len(e.args))
	for name := range e.args {
		if name != "attachments" && !slices.Contains(e.used, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if v, ok := e.args.text(name); ok {
			if err := mw.WriteField(name, v); err != nil {
				return err
			}
		}
	}
	for i, a := range as {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, multipartFileField, quoteless(a.Name)))
		h.Set("Content-Type", a.MimeType)
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, files[i]); err != nil {
			return fmt.Errorf("send attachment %s: %w", a.FileID, err)
		}
	}
	return mw.Close()
}

// quoteless drops the characters a quoted filename cannot hold.
func quoteless(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r == '\r' || r == '\n' {
			return '_'
		}
		return r
	}, s)
}

// closeAll closes every reader.
func closeAll(rcs []io.ReadCloser) {
	for _, rc := range rcs {
		rc.Close()
	}
}
