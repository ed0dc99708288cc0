package pipeline

import (
	"context"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Events takes the gateway's events (events.Hub, whose webhook subscriber
// queues them). Publish must not block.
type Events interface {
	Publish(ctx context.Context, e *mcpgate.Event)
}

// wanter is implemented by Events that can tell that no subscriber wants
// an event (events.Hub): the pipeline then does not make it.
type wanter interface {
	Wants(userID, eventType string) bool
}

// callEventData is the data of call.completed and call.failed. It never
// holds the call's arguments or result, which may carry secrets.
type callEventData struct {
	CallID     string `json:"call_id"`
	Agent      string `json:"agent"`
	Skill      string `json:"skill,omitempty"`
	Tool       string `json:"tool"`
	Outcome    string `json:"outcome"`
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

// publish publishes the call's event: call.completed when it ran (or was
// replayed) and call.failed for every other outcome.
func (p *Pipeline) publish(ctx context.Context, call *mcpgate.Call, id, outcome string, err error, d time.Duration) {
	if p.opts.Events == nil {
		return
	}
	typ := mcpgate.EventCallFailed
	if outcome == mcpgate.OutcomeOK || outcome == mcpgate.OutcomeReplayed {
		typ = mcpgate.EventCallCompleted
	}
	if w, ok := p.opts.Events.(wanter); ok && !w.Wants(call.Agent.OwnerID, typ) {
		return
	}
	data := callEventData{CallID: id, Agent: call.Agent.ID, Tool: call.ToolName, Outcome: outcome,
		DurationMS: d.Milliseconds(), Error: eventError(outcome, err)}
	if call.Skill != nil {
		data.Skill = call.Skill.Name
	}
	b := data.appendJSON(make([]byte, 0, 160))
	// The call's context may have ended: its event goes after its reply.
	p.opts.Events.Publish(context.WithoutCancel(ctx), &mcpgate.Event{ID: mcpgate.NewID("evt_"), Type: typ, CreatedAt: p.opts.Now().UTC(),
		UserID: call.Agent.OwnerID, AgentID: call.Agent.ID, Data: b})
}

// appendJSON appends the data as encoding/json marshals it (fields in
// order, empty optional ones left out), without its reflection.
func (d *callEventData) appendJSON(b []byte) []byte {
	b = append(b, `{"call_id":`...)
	b = mcpgate.AppendJSONString(b, d.CallID)
	b = append(b, `,"agent":`...)
	b = mcpgate.AppendJSONString(b, d.Agent)
	if d.Skill != "" {
		b = append(b, `,"skill":`...)
		b = mcpgate.AppendJSONString(b, d.Skill)
	}
	b = append(b, `,"tool":`...)
	b = mcpgate.AppendJSONString(b, d.Tool)
	b = append(b, `,"outcome":`...)
	b = mcpgate.AppendJSONString(b, d.Outcome)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendInt(b, d.DurationMS, 10)
	if d.Error != "" {
		b = append(b, `,"error":`...)
		b = mcpgate.AppendJSONString(b, d.Error)
	}
	return append(b, '}')
}

// eventError says why a call failed: the gateway's own message for an
// error, and a fixed phrase for a failed result, whose text may echo what
// the arguments held.
func eventError(outcome string, err error) string {
	switch {
	case err != nil:
		return mcpgate.ErrorMessage(err)
	case outcome == mcpgate.OutcomeInvalid:
		return "the arguments did not match the tool's input schema"
	case outcome == mcpgate.OutcomeToolError:
		return "the tool reported an error"
	case outcome == mcpgate.OutcomeRejected:
		return "the call was not approved"
	}
	return ""
}
