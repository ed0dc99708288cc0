package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// confirmSchema is the form an elicitation asks the calling user to fill
// in: one boolean, which must be true for the call to run.
const confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean","title":"Run this call",` +
	`"description":"Check to let the gateway run this call; leave unchecked or decline to stop it.","default":false}},"required":["confirm"]}`

// elicitResult is the client's answer to elicitation/create.
type elicitResult struct {
	Action  string `json:"action"` // accept, decline or cancel
	Content struct {
		Confirm *bool `json:"confirm"`
	} `json:"content"`
}

// askCaller asks the calling user to confirm a call of a skill with
// approval: caller, through elicitation/create on the call's session.
// asked is false when the client cannot be asked (no elicitation
// capability in form mode, no stream, or it refused the request): the
// call then goes to the reviewers. Otherwise it returns nil to run the
// call, with its arguments as the caller sent them and its attachments
// signed anew, or the result that answers it: declined, or rejected when
// no answer came within the skill's approval timeout.
func (p *Pipeline) askCaller(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState) (res *mcpgate.Result, asked bool, err error) {
	if call.Client == nil || !elicitsForms(call.Client.ClientCapabilities()) {
		return nil, false, nil
	}
	params, err := confirmParams(e, callerArguments(st))
	if err != nil {
		return nil, false, err
	}
	wait, cancel := context.WithTimeout(ctx, e.Skill.ApprovalWait())
	defer cancel()
	raw, err := call.Client.RequestClient(wait, "elicitation/create", params)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, true, mcpgate.Errorf(mcpgate.ECANCELED, "the call of tool %s was canceled while it waited for the caller's confirmation", e.Name)
	case wait.Err() != nil:
		st.rejected = true
		return mcpgate.ErrorResult("rejected: no decision within %s", e.Skill.ApprovalWait()), true, nil
	default:
		p.opts.Logger.Info("the caller could not be asked to confirm a call; it waits for a reviewer", "agent", call.Agent.ID, "tool", e.Name, "err", err)
		return nil, false, nil
	}
	if confirmed(raw) {
		call.Arguments, call.Decoded = callerArguments(st), nil
		return nil, true, p.resign(ctx, call)
	}
	st.rejected = true
	return mcpgate.ErrorResult("Call to %s was declined by the caller", e.Name), true, nil
}

// confirmed reports whether the client's answer accepts the call with
// confirm checked.
func confirmed(raw json.RawMessage) bool {
	var r elicitResult
	return json.Unmarshal(raw, &r) == nil && r.Action == "accept" && r.Content.Confirm != nil && *r.Content.Confirm
}

// confirmParams are the params of the elicitation/create that asks the
// caller to confirm a call of e with args.
func confirmParams(e *registry.Entry, args []byte) (json.RawMessage, error) {
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, args, "", "  "); err != nil {
		return nil, fmt.Errorf("format arguments: %w", err)
	}
	msg := fmt.Sprintf("Tool %s (skill %s) needs your confirmation before it runs, with these arguments:\n%s\nRun it?", e.Name, e.Skill.Name, pretty.String())
	return json.Marshal(struct {
		Message string          `json:"message"`
		Schema  json.RawMessage `json:"requestedSchema"`
	}{msg, json.RawMessage(confirmSchema)})
}

// elicitsForms reports whether client capabilities declare elicitation in
// form mode: an elicitation object that names form, or names no mode at
// all (as clients before 2025-11-25 declare it).
func elicitsForms(caps json.RawMessage) bool {
	var c struct {
		Elicitation map[string]json.RawMessage `json:"elicitation"`
	}
	if json.Unmarshal(caps, &c) != nil || c.Elicitation == nil {
		return false
	}
	_, form := c.Elicitation["form"]
	_, url := c.Elicitation["url"]
	return form || !url
}
