package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// AttachmentResolver checks a file handed to a call and makes its signed
// download URL (files.Resolver).
type AttachmentResolver interface {
	// Resolve returns the attachment of file fileID if user userID owns it
	// and it is uploaded: ENOTFOUND when it is missing or another user's,
	// EINVALID when its upload is not complete.
	Resolve(ctx context.Context, userID, fileID string) (*mcpgate.Attachment, error)
}

// attachmentRef is one entry of arguments.attachments as the caller sends it.
type attachmentRef struct {
	FileID      string `json:"file_id"`
	Filename    string `json:"filename,omitempty"`
	ContentType string `json:"content_type,omitempty"`
}

// attachmentArg is one entry of arguments.attachments as the backend gets
// it: the caller's entry with the file's size and a signed download URL.
type attachmentArg struct {
	FileID      string `json:"file_id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	URL         string `json:"url"`
}

// resourceLink is one entry of arguments.attachments as a relayed MCP
// tool gets it: a resource_link content block (MCP 2025-11-25) whose uri
// is the signed download URL, with the file's ID in _meta.
type resourceLink struct {
	Type     string            `json:"type"`
	URI      string            `json:"uri"`
	Name     string            `json:"name"`
	MimeType string            `json:"mimeType,omitempty"`
	Size     int64             `json:"size,omitempty"`
	Meta     map[string]string `json:"_meta"`
}

// attachmentsMarker finds calls that may hand files without decoding the
// others, as keyMarker does for idempotency keys.
var attachmentsMarker = []byte(`"attachments"`)

// attachments checks every file of arguments.attachments before anything
// runs, sets call.Attachments, and rewrites the arguments' entries with
// their sizes and signed URLs (as resource_link blocks for a relayed MCP
// tool). A bad entry is EINVALIDPARAM naming its
// index.
func (p *Pipeline) attachments(ctx context.Context, call *mcpgate.Call) error {
	if !bytes.Contains(call.Arguments, attachmentsMarker) {
		return nil // most calls: no need to decode their arguments
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(call.Arguments, &args) != nil || args["attachments"] == nil {
		return nil
	}
	var refs []attachmentRef
	if err := json.Unmarshal(args["attachments"], &refs); err != nil {
		return mcpgate.Errorf(mcpgate.EINVALIDPARAM, "arguments.attachments must be a list of {file_id, filename?, content_type?}")
	}
	if p.opts.Attachments == nil && len(refs) > 0 {
		return mcpgate.Errorf(mcpgate.EINVALIDPARAM, "arguments.attachments: this gateway stores no files")
	}
	out := make([]attachmentArg, len(refs))
	for i, ref := range refs {
		a, err := p.attachment(ctx, call.Caller.UserID, i, ref)
		if err != nil {
			return err
		}
		call.Attachments = append(call.Attachments, *a)
		out[i] = attachmentArg{FileID: a.FileID, Filename: a.Name, ContentType: a.MimeType, Size: a.Size, URL: a.URL}
	}
	if call.Skill != nil && call.Skill.Kind == mcpgate.SkillMCP {
		return setArgument(call, args, "attachments", resourceLinks(call.Attachments))
	}
	return setArgument(call, args, "attachments", out)
}

// resourceLinks returns the attachments as resource_link blocks.
func resourceLinks(as []mcpgate.Attachment) []resourceLink {
	links := make([]resourceLink, len(as))
	for i, a := range as {
		links[i] = resourceLink{Type: "resource_link", URI: a.URL, Name: a.Name, MimeType: a.MimeType, Size: a.Size,
			Meta: map[string]string{"mcpgate/file_id": a.FileID}}
	}
	return links
}

// attachment resolves entry i.
func (p *Pipeline) attachment(ctx context.Context, userID string, i int, ref attachmentRef) (*mcpgate.Attachment, error) {
	if ref.FileID == "" {
		return nil, mcpgate.Errorf(mcpgate.EINVALIDPARAM, "arguments.attachments[%d].file_id is missing", i)
	}
	a, err := p.opts.Attachments.Resolve(ctx, userID, ref.FileID)
	switch mcpgate.ErrorCode(err) {
	case "":
	case mcpgate.ENOTFOUND, mcpgate.EINVALID:
		return nil, mcpgate.Errorf(mcpgate.EINVALIDPARAM, "arguments.attachments[%d].file_id %q: %s", i, ref.FileID, mcpgate.ErrorMessage(err))
	default:
		return nil, fmt.Errorf("attachment %d: %w", i, err)
	}
	if ref.Filename != "" {
		a.Name = ref.Filename
	}
	if ref.ContentType != "" {
		a.MimeType = ref.ContentType
	}
	return a, nil
}

// setArgument replaces one argument and re-encodes the arguments.
func setArgument(call *mcpgate.Call, args map[string]json.RawMessage, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	args[name] = b
	if call.Arguments, err = json.Marshal(args); err != nil {
		return fmt.Errorf("encode arguments: %w", err)
	}
	return nil
}
