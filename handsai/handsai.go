// Package handsai serves the HandsAI-compatible tool surface to callers
// written against HandsAI's simpler API: one JSON-RPC object per POST to
// /mcp/tools/list or /mcp/tools/call, without sessions, listing and calling
// the tools of every agent the credential may use at once. Calls run
// through the same pipeline as MCP calls (through Caller); only the
// envelope and the error mapping differ. The server authenticates each
// request first and routes it here with its credential.
//
// It reads JSON-RPC objects with the mcp package's decoder and knows the
// agents' tools from the registry's tables. It must not import a store, a
// backend, the pipeline, the server or the management API.
package handsai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/registry"
)

// Caller runs tool calls: the pipeline.
type Caller interface {
	Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)
}

// Tables lists every agent's tool table.
type Tables interface {
	// Tables returns every agent's table, sorted by agent ID.
	Tables() []*registry.Table
}

// Options configure a Surface. Tables and Caller are required.
type Options struct {
	// Tables are the agents and tools to list and call.
	Tables Tables
	// Caller runs the calls.
	Caller Caller
	// Logger is optional; nil discards.
	Logger *slog.Logger
}

// Surface serves the two routes of the HandsAI-compatible surface.
type Surface struct {
	opts Options
}

// New returns the surface.
func New(opts *Options) *Surface {
	s := &Surface{opts: *opts}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return s
}

// handsAIMaxBody is the largest request body the surface reads.
const handsAIMaxBody = 4 << 20

// handsAIMethod answers one JSON-RPC method for an authenticated caller. A
// *rpcFailure error is sent as it is; others are mapped by handsAIError.
type handsAIMethod func(ctx context.Context, cred *mcpgate.Credential, params json.RawMessage) (any, error)

// ServeList answers POST /mcp/tools/list for an authenticated caller.
func (s *Surface) ServeList(w http.ResponseWriter, r *http.Request, cred *mcpgate.Credential) {
	s.serve(w, r, cred, "tools/list", s.handsAIList)
}

// ServeCall answers POST /mcp/tools/call for an authenticated caller.
func (s *Surface) ServeCall(w http.ResponseWriter, r *http.Request, cred *mcpgate.Credential) {
	s.serve(w, r, cred, "tools/call", s.handsAICall)
}

// serve decodes the request's JSON-RPC object, runs fn and writes the
// response: HTTP 200 for every JSON-RPC answer but a gateway condition's
// (429 with Retry-After for a rate limit, 409 for an idempotency key in
// flight, 422 for a key reused for another call), and 413 for a body over
// 4 MiB.
func (s *Surface) serve(w http.ResponseWriter, r *http.Request, cred *mcpgate.Credential, method string, fn handsAIMethod) {
	body, err := readHandsAIBody(w, r)
	if err != nil {
		mcp.WriteHTTPError(w, err)
		return
	}
	req, fail := decodeRPCRequest(body, method)
	if fail != nil {
		writeRPC(w, req, nil, fail)
		return
	}
	result, err := fn(r.Context(), cred, req.Params)
	if err != nil {
		fail := s.handsAIError(req, err)
		if fail.Data != nil {
			mcp.SetRetryAfter(w, err)
			writeRPCStatus(w, fail.Data.Status, req, nil, fail)
			return
		}
		writeRPC(w, req, nil, fail)
		return
	}
	writeRPC(w, req, result, nil)
}

// readHandsAIBody reads the request body, up to handsAIMaxBody. Returns
// ETOOLARGE beyond it.
func readHandsAIBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, handsAIMaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, mcpgate.Errorf(mcpgate.ETOOLARGE, "the request body is larger than %d bytes", handsAIMaxBody)
	} else if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the request body could not be read")
	}
	return body, nil
}

// writeRPC writes a JSON-RPC response with HTTP 200, echoing req's id.
func writeRPC(w http.ResponseWriter, req *rpcRequest, result any, fail *rpcFailure) {
	writeRPCStatus(w, http.StatusOK, req, result, fail)
}

// writeRPCStatus writes a JSON-RPC response with an HTTP status, echoing
// req's id.
func writeRPCStatus(w http.ResponseWriter, status int, req *rpcRequest, result any, fail *rpcFailure) {
	resp := rpcResponse{JSONRPC: "2.0", Result: result, Error: fail}
	if req != nil {
		resp.ID = req.ID
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// handsAIError is the one place where errors of the HandsAI surface become
// JSON-RPC errors: an unknown tool is -32602 "Invalid params: tool not
// found"; a rate limit's refusal, an idempotency key in flight and a key
// reused for another call are -32000 with the MCP endpoint's data (and its
// status as the HTTP status); every other failure to run a tool is -32603
// "Internal error: …".
func (s *Surface) handsAIError(req *rpcRequest, err error) *rpcFailure {
	var fail *rpcFailure
	switch code := mcpgate.ErrorCode(err); {
	case errors.As(err, &fail):
		return fail
	case code == mcpgate.ENOTFOUND:
		return rpcFailf(handsAIInvalidParams, "Invalid params: tool not found")
	case code == mcpgate.ERATELIMIT, code == mcpgate.ECONFLICT, code == mcpgate.EMISMATCH:
		return conditionFailure(err)
	case code == mcpgate.EINTERNAL:
		s.opts.Logger.Error("HandsAI "+req.Method+" failed", "err", err)
		return rpcFailf(handsAIInternal, "Internal error: the gateway failed; its log has the details")
	}
	return rpcFailf(handsAIInternal, "Internal error: %s", mcpgate.ErrorMessage(err))
}

// toolListResult is the result of tools/list.
type toolListResult struct {
	Tools []json.RawMessage `json:"tools"`
}

// handsAIList lists the tools of every agent cred may use, by name.
func (s *Surface) handsAIList(_ context.Context, cred *mcpgate.Credential, _ json.RawMessage) (any, error) {
	tools := usableHandsAITools(s.opts.Tables.Tables(), cred)
	sortHandsAITools(tools)
	res := toolListResult{Tools: make([]json.RawMessage, len(tools))}
	for i := range tools {
		b, err := tools[i].listJSON()
		if err != nil {
			return nil, err
		}
		res.Tools[i] = b
	}
	return res, nil
}

// toolCallResult is the result of a successful tools/call.
type toolCallResult struct {
	Content []mcpgate.Content `json:"content"`
}

// handsAICall runs the call through the pipeline; arguments the pipeline
// refuses are HandsAI's -32602 naming each field, other tool failures
// -32603.
func (s *Surface) handsAICall(ctx context.Context, cred *mcpgate.Credential, params json.RawMessage) (any, error) {
	p, err := decodeToolCallParams(params)
	if err != nil {
		return nil, err
	}
	tool := resolveHandsAITool(s.opts.Tables.Tables(), cred, p.Name)
	if tool == nil {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "tool %q not found", p.Name)
	}
	res, err := s.opts.Caller.Call(ctx, &mcpgate.Call{
		Agent: tool.agent, ToolName: tool.entry.Name, Arguments: p.Arguments,
		Caller: cred.Caller(), Notifier: mcpgate.NopNotifier{},
	})
	switch {
	case err != nil:
		return nil, err
	case res.Invalid != nil:
		return nil, invalidParamsFailure(mcpgate.ErrorMessage(res.Invalid))
	}
	return toolCallOutcome(res)
}

// toolCallOutcome turns a tool's result into the call's result, or a tool
// failure into -32603 carrying the result's text.
func toolCallOutcome(res *mcpgate.Result) (any, error) {
	out := toolCallResult{Content: res.Content}
	isError := res.IsError
	if len(res.Raw) > 0 { // a relayed result: read what it says
		var raw struct {
			Content []mcpgate.Content `json:"content"`
			IsError bool              `json:"isError"`
		}
		if err := json.Unmarshal(res.Raw, &raw); err != nil {
			return nil, fmt.Errorf("decode relayed result: %w", err)
		}
		out.Content, isError = raw.Content, raw.IsError
	}
	if isError {
		return nil, rpcFailf(handsAIInternal, "Internal error: %s", failureText(out.Content))
	}
	if out.Content == nil {
		out.Content = []mcpgate.Content{}
	}
	return out, nil
}

// failureText joins the text blocks of a failed result.
func failureText(content []mcpgate.Content) string {
	var texts []string
	for _, c := range content {
		if t := strings.TrimSpace(c.Text); c.Type == "text" && t != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) == 0 {
		return "the tool failed without saying why"
	}
	return strings.Join(texts, "\n")
}
