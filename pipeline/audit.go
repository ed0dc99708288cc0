package pipeline

import (
	"time"

	"github.com/mcpgate/mcpgate"
)

// Auditor takes the audit record of every call. Audit must never block:
// it queues the record, or drops and counts it when the queue is full.
// tool (nil for an unknown tool) lets it redact the arguments, and res
// (nil after an error) lets it measure the result, both off the hot path;
// decoded is rec.Arguments as the validate stage decoded them (nil when
// it did not), which spares the Auditor decoding them again. The Auditor
// is the last reader of decoded and may change it.
type Auditor interface {
	Audit(rec *mcpgate.CallRecord, tool *mcpgate.Tool, decoded any, res *mcpgate.Result)
}

// callState is what the stages learn about a call that its record needs.
type callState struct {
	key      string // the idempotency key, "" when none
	hash     string // the arguments' hash, when a key was claimed
	replayed bool   // the result is a stored one
	rejected bool   // a reviewer rejected the call, or no one decided in time
	// args are the arguments as the caller sent them, without the
	// idempotency key and before the attachments stage signs URLs.
	args []byte
	// backend is the skill whose backend dispatch called, nil when it
	// called none; backendOutcome and backendTime are its answer's, which
	// the record stage observes.
	backend        *mcpgate.Skill
	backendOutcome string
	backendTime    time.Duration
}

// audit hands the call's record, whose ID is id, to the Auditor.
func (p *Pipeline) audit(call *mcpgate.Call, st *callState, res *mcpgate.Result, err error, id, outcome string, start time.Time, d time.Duration) {
	if p.opts.Auditor == nil {
		return
	}
	rec := &mcpgate.CallRecord{
		ID: id, Time: start, AgentID: call.Agent.ID, Tool: call.ToolName, ArgsHash: st.hash, Arguments: call.Arguments,
		Outcome: outcome, Duration: d, SessionID: call.SessionID, IdempotencyKey: st.key,
		Error: mcpgate.ErrorMessage(err),
	}
	c := call.Caller
	rec.CredentialKind, rec.CredentialID, rec.UserID = c.Kind, c.CredentialID, c.UserID
	if call.Skill != nil {
		rec.Skill = call.Skill.Name
	}
	p.opts.Auditor.Audit(rec, call.Tool, call.Decoded, res)
}

// outcomeOf names how a call ended, as the audit log records it.
func outcomeOf(st *callState, res *mcpgate.Result, err error) string {
	switch {
	case err != nil:
		return errorOutcome(mcpgate.ErrorCode(err))
	case st.replayed:
		return mcpgate.OutcomeReplayed
	case st.rejected:
		return mcpgate.OutcomeRejected
	case res.Failure != "":
		return errorOutcome(res.Failure)
	case res.Invalid != nil:
		return mcpgate.OutcomeInvalid
	case res.IsError:
		return mcpgate.OutcomeToolError
	}
	return mcpgate.OutcomeOK
}

// errorOutcome names the outcome of a call that ended with an error code.
func errorOutcome(code string) string {
	switch code {
	case mcpgate.ETIMEOUT:
		return mcpgate.OutcomeTimeout
	case mcpgate.EUNAVAILABLE:
		return mcpgate.OutcomeUnavailable
	case mcpgate.ERATELIMIT:
		return mcpgate.OutcomeRateLimited
	case mcpgate.ECONFLICT, mcpgate.EMISMATCH:
		return mcpgate.OutcomeConflict
	case mcpgate.EINVALID:
		return mcpgate.OutcomeInvalid
	}
	return mcpgate.OutcomeRejected
}
