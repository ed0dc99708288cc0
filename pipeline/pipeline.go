// Package pipeline runs every tools/call through the gateway's stages in
// one fixed order: resolve the tool, claim its idempotency key, validate
// the arguments, pass the approval gate, dispatch to the skill's backend
// under its deadline, check the output, and record the outcome (metrics,
// the audit log, and the call event webhooks deliver). Authentication and authorization
// happen before, at the HTTP edge, because sessions are bound to them.
//
// Stages never know which backend runs a call, and backends never know
// about credentials or policy. The package must not import the transport,
// a store or a concrete backend.
package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// Tables finds an agent's tool table.
type Tables interface {
	Table(agentID string) (*registry.Table, bool)
}

// Recorder records the outcome of each call.
type Recorder interface {
	ObserveCall(agent, tool, outcome string, d time.Duration)
}

// BackendRecorder records how long each skill's backend took to answer.
type BackendRecorder interface {
	ObserveBackend(agent, skill, kind, outcome string, d time.Duration)
}

// Options configure a Pipeline.
type Options struct {
	Tables   Tables                                // required
	Backends map[mcpgate.SkillKind]mcpgate.Backend // by skill kind
	Recorder Recorder                              // optional
	// BackendRecorder, optional, times the backend alone.
	BackendRecorder BackendRecorder
	// Tracer traces the stages and the backend call (default
	// mcpgate.NopTracer).
	Tracer mcpgate.Tracer
	// Idempotency keeps idempotency keys; nil turns the stage off (a key
	// is still taken out of the arguments).
	Idempotency IdempotencyStore
	// IdempotencyTTL is how long a key's result is replayed; 0 means
	// DefaultIdempotencyTTL.
	IdempotencyTTL time.Duration
	// ClaimGrace is how long past a tool's deadline an unfinished claim
	// (left by a gateway killed mid-call) holds its key; 0 means
	// DefaultClaimGrace.
	ClaimGrace time.Duration
	// Auditor writes the audit log; optional.
	Auditor Auditor
	Logger  *slog.Logger
	Now     func() time.Time

	// Limiter enforces rate limits; DefaultRateLimit applies to skills and
	// tools without one of their own. LimitRecorder counts refusals.
	Limiter          Limiter
	DefaultRateLimit *mcpgate.RateLimit
	LimitRecorder    LimitRecorder

	// Approvals keeps the approvals of gated calls; nil refuses every
	// call that needs one. Signals wakes a waiting call when its approval
	// is decided on any replica; without it, or for a decision made
	// without it, the call reads its approval every ApprovalPoll
	// (DefaultApprovalPoll when zero). ApprovalEvents is told of each
	// approval asked and decided here; optional.
	Approvals      ApprovalStore
	Signals        Signals
	ApprovalPoll   time.Duration
	ApprovalEvents ApprovalEvents
	// Attachments checks the files of arguments.attachments; nil refuses
	// calls that hand files.
	Attachments AttachmentResolver
	// Events takes call.completed and call.failed, one per call, for
	// webhooks; optional.
	Events Events
}

// Pipeline runs tool calls.
type Pipeline struct {
	opts   Options
	traced bool // opts.Tracer is not a NopTracer
}

// deadlineGrace is added to a tool's timeout for the pipeline's own
// deadline, so that a backend that honors the timeout reports it itself.
const deadlineGrace = 2 * time.Second

// New returns a pipeline; opts and opts.Tables are required.
func New(opts *Options) *Pipeline {
	p := &Pipeline{opts: *opts}
	if p.opts.Logger == nil {
		p.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if p.opts.Now == nil {
		p.opts.Now = time.Now
	}
	if p.opts.Tracer == nil {
		p.opts.Tracer = mcpgate.NopTracer{}
	}
	_, nop := p.opts.Tracer.(mcpgate.NopTracer)
	p.traced = !nop
	return p
}

// Call runs one tools/call. call.Agent and call.ToolName must be set; the
// pipeline resolves call.Skill and call.Tool. Returns ENOTFOUND for an
// unknown tool and ETIMEOUT when the backend overruns its deadline; tool
// failures, including invalid arguments, are results with IsError. The
// call's record (its metrics, its backend's time, its audit record and
// its event) is made after the reply went out when call.Notifier is a
// Deferrer that takes it (publish's ctx may have ended by then), and
// before Call returns otherwise.
func (p *Pipeline) Call(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	start := p.opts.Now()
	st := &callState{}
	res, err := p.run(ctx, call, st)
	d := p.opts.Now().Sub(start)
	_, span := p.stage(ctx, "mcpgate.record")
	mcpgate.AfterReply(call.Notifier, func() {
		p.record(call, res, err, d)
		p.observeBackend(st)
		if p.opts.Auditor != nil || p.opts.Events != nil {
			id, outcome := mcpgate.NewCallID(start), outcomeOf(st, res, err)
			p.audit(call, st, res, err, id, outcome, start, d)
			p.publish(ctx, call, id, outcome, err, d)
		}
	})
	span.End(nil)
	return res, err
}

// Stage spans. Each stage that does work for a call runs in a span of its
// own, "mcpgate.<stage>", a child of the request's span: rate_limit,
// idempotency (when a key is claimed), attachments (when the arguments
// may hand files), validate, approval (when the tool needs one), dispatch
// (whose child is the backend's span) and record. A stage that refuses
// the call ends its span with the error (error.type is its code); one
// that answers with a tool error marks it with error.type tool_error.

// stage begins the span of one of the call's stages, named
// "mcpgate.<stage>". Without tracing it returns ctx and a span that does
// nothing, and allocates nothing.
func (p *Pipeline) stage(ctx context.Context, name string) (context.Context, mcpgate.Span) {
	if !p.traced {
		return mcpgate.NopTracer{}.Start(ctx, name)
	}
	return p.opts.Tracer.Start(ctx, name)
}

// endStage ends a stage's span with its outcome.
func (p *Pipeline) endStage(span mcpgate.Span, res *mcpgate.Result, err error) {
	if p.traced && err == nil && res != nil && res.IsError {
		span.SetAttributes(slog.String("error.type", "tool_error"))
	}
	span.End(err)
}

// run is Call without the recording.
func (p *Pipeline) run(ctx context.Context, call *mcpgate.Call, st *callState) (*mcpgate.Result, error) {
	entry, err := p.resolve(call)
	if err != nil {
		return nil, err
	}
	sctx, span := p.stage(ctx, "mcpgate.rate_limit")
	err = p.rateLimit(sctx, entry, call)
	span.End(err)
	if err != nil {
		return nil, err
	}
	return p.idempotency(ctx, entry, call, st, p.execute)
}

// execute runs the stages after idempotency. The approval gate binds the
// call to the arguments as the caller sent them (st.args, what the
// idempotency stage hashed), not as the attachments stage rewrites them
// with signed URLs, which differ on every try and may expire while the
// call waits; an approved call's URLs are signed anew.
func (p *Pipeline) execute(ctx context.Context, entry *registry.Entry, call *mcpgate.Call, st *callState) (*mcpgate.Result, error) {
	st.args = call.Arguments
	if err := p.tracedAttachments(ctx, call); err != nil {
		return nil, err
	}
	_, span := p.stage(ctx, "mcpgate.validate")
	res := validateArguments(entry, call)
	p.endStage(span, res, nil)
	if res != nil {
		return res, nil
	}
	if res, err := p.tracedApproval(ctx, entry, call, st); res != nil || err != nil {
		return res, err
	}
	sctx, span := p.stage(ctx, "mcpgate.dispatch")
	res, err := p.dispatch(sctx, entry, call, st)
	if err == nil && !res.IsError {
		res = checkOutput(entry, res)
	}
	p.endStage(span, res, err)
	return res, err
}

// tracedAttachments runs the attachments stage, in a span when the
// arguments may hand files.
func (p *Pipeline) tracedAttachments(ctx context.Context, call *mcpgate.Call) error {
	if !p.traced || !bytes.Contains(call.Arguments, attachmentsMarker) {
		return p.attachments(ctx, call)
	}
	ctx, span := p.stage(ctx, "mcpgate.attachments")
	err := p.attachments(ctx, call)
	span.End(err)
	return err
}

// tracedApproval runs the approval gate, in a span when the tool needs
// approval.
func (p *Pipeline) tracedApproval(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState) (*mcpgate.Result, error) {
	if !p.traced || !e.Skill.NeedsApproval(e.Tool) {
		return p.approvalGate(ctx, e, call, st)
	}
	ctx, span := p.stage(ctx, "mcpgate.approval")
	res, err := p.approvalGate(ctx, e, call, st)
	p.endStage(span, res, err)
	return res, err
}

// resolve finds the call's tool in the agent's table.
func (p *Pipeline) resolve(call *mcpgate.Call) (*registry.Entry, error) {
	t, ok := p.opts.Tables.Table(call.Agent.ID)
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q not found", call.Agent.ID)
	}
	e := t.Lookup(call.ToolName)
	if e == nil {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "unknown tool %q: tools/list shows the tools of agent %q", call.ToolName, call.Agent.ID)
	}
	call.Skill, call.Tool = e.Skill, e.Tool
	return e, nil
}

// validateArguments checks the arguments against the input schema and
// returns an error result naming each bad field, or nil when they pass.
// Absent arguments are an empty object.
func validateArguments(e *registry.Entry, call *mcpgate.Call) *mcpgate.Result {
	if len(call.Arguments) == 0 || string(call.Arguments) == "null" {
		call.Arguments = json.RawMessage("{}")
	}
	v, err := e.Input.Decode(call.Arguments)
	if err != nil {
		res := mcpgate.ErrorResult("Invalid arguments for tool %s:\n%s", e.Name, indent(mcpgate.ErrorMessage(err)))
		res.Invalid = err
		return res
	}
	call.Decoded = v
	return nil
}

// progressReporter is implemented by backends that report their calls'
// progress themselves (upstream MCP servers, agents), whose sequence must
// not be interleaved with another.
type progressReporter interface {
	ReportsProgress() bool
}

// selfTimed is implemented by backends that end every call at its
// skill's timeout (Skill.CallTimeout) themselves, with ETIMEOUT.
type selfTimed interface {
	EndsCallsAtTimeout() bool
}

// dispatch runs the call on its skill's backend under the tool's deadline.
// For a backend that reports no progress of its own, the pipeline reports
// the call's start and end.
func (p *Pipeline) dispatch(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState) (*mcpgate.Result, error) {
	backend := p.opts.Backends[e.Skill.Kind]
	if backend == nil {
		return nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "no backend serves skills of kind %q", e.Skill.Kind)
	}
	timeout := toolTimeout(e)
	if !keepsDeadline(backend, e, timeout) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout+deadlineGrace)
		defer cancel()
	}
	r, reports := backend.(progressReporter)
	ownProgress := !reports || !r.ReportsProgress()
	if ownProgress {
		call.Notifier.Progress(0, 1, "calling "+e.Name)
	}
	start := p.opts.Now()
	res, err := p.callBackend(ctx, backend, e, call)
	st.backend, st.backendOutcome, st.backendTime = e.Skill, resultOutcome(res, err), p.opts.Now().Sub(start)
	if err != nil && mcpgate.ErrorCode(err) == mcpgate.EINTERNAL {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, mcpgate.Errorf(mcpgate.ETIMEOUT, "tool %s did not answer within %s", e.Name, timeout)
		case errors.Is(ctx.Err(), context.Canceled):
			return nil, mcpgate.Errorf(mcpgate.ECANCELED, "the call of tool %s was canceled", e.Name)
		}
	}
	if err == nil && ownProgress {
		call.Notifier.Progress(1, 1, "done")
	}
	return res, err
}

// callBackend runs the call on backend in a span of its own, whose trace
// context the backend passes on.
func (p *Pipeline) callBackend(ctx context.Context, backend mcpgate.Backend, e *registry.Entry, call *mcpgate.Call) (*mcpgate.Result, error) {
	if !p.traced {
		return checkedCall(ctx, backend, call)
	}
	ctx, span := p.opts.Tracer.Start(ctx, backendSpanName(e.Skill.Kind), backendAttrs(e)...)
	call.Trace.Parent, call.Trace.State = p.opts.Tracer.Traceparent(ctx)
	res, err := checkedCall(ctx, backend, call)
	if err == nil && res.IsError {
		span.SetAttributes(slog.String("error.type", "tool_error"))
	}
	span.End(err)
	return res, err
}

// backendSpanName names a backend call's span after its skill's kind.
func backendSpanName(kind mcpgate.SkillKind) string {
	switch kind {
	case mcpgate.SkillREST:
		return "backend rest"
	case mcpgate.SkillMCP:
		return "backend mcp"
	case mcpgate.SkillAgent:
		return "backend agent"
	}
	return "backend " + string(kind)
}

// backendAttrs are the attributes of a backend call's span: a client
// span naming the skill and tool, with the HTTP method of a REST tool and
// the MCP method of a relayed one.
func backendAttrs(e *registry.Entry) []slog.Attr {
	attrs := []slog.Attr{
		slog.String(mcpgate.SpanKindKey, mcpgate.SpanClient),
		slog.String("mcpgate.skill.kind", string(e.Skill.Kind)), slog.String("mcpgate.skill.name", e.Skill.Name),
		slog.String("gen_ai.tool.name", e.Name),
	}
	switch {
	case e.Skill.Kind == mcpgate.SkillMCP:
		attrs = append(attrs, slog.String("mcp.method.name", "tools/call"))
	case e.Tool.Request != nil && e.Tool.Request.Method != "":
		attrs = append(attrs, slog.String("http.request.method", e.Tool.Request.Method))
	}
	return appendServer(attrs, e.Skill)
}

// appendServer adds server.address and server.port of the skill's URL,
// when it has one (never its user info or path).
func appendServer(attrs []slog.Attr, sk *mcpgate.Skill) []slog.Attr {
	raw := sk.URL
	if sk.Kind == mcpgate.SkillREST {
		raw = sk.BaseURL
	}
	u, err := url.Parse(raw)
	if raw == "" || err != nil || u.Hostname() == "" {
		return attrs
	}
	attrs = append(attrs, slog.String("server.address", u.Hostname()))
	if port, err := strconv.Atoi(u.Port()); err == nil {
		attrs = append(attrs, slog.Int("server.port", port))
	}
	return attrs
}

// checkedCall runs the call on backend, which must return a result or
// an error.
func checkedCall(ctx context.Context, backend mcpgate.Backend, call *mcpgate.Call) (*mcpgate.Result, error) {
	res, err := backend.CallTool(ctx, call)
	if err == nil && res == nil {
		err = errors.New("backend returned neither a result nor an error")
	}
	return res, err
}

// observeBackend records the backend's answer time for its skill, when
// the call was dispatched.
func (p *Pipeline) observeBackend(st *callState) {
	if p.opts.BackendRecorder == nil || st.backend == nil {
		return
	}
	sk := st.backend
	p.opts.BackendRecorder.ObserveBackend(sk.AgentID, sk.Name, string(sk.Kind), st.backendOutcome, st.backendTime)
}

// resultOutcome names a call's outcome: ok, tool_error, the failure of
// a backend that could not serve it (timeout, unavailable) or the error's
// code.
func resultOutcome(res *mcpgate.Result, err error) string {
	switch {
	case err != nil:
		return mcpgate.ErrorCode(err)
	case res.Failure != "":
		return res.Failure // the backend could not serve the call: not the tool's failure
	case res.IsError:
		return "tool_error"
	}
	return "ok"
}

// toolTimeout is the tool's own timeout, or its skill's.
func toolTimeout(e *registry.Entry) time.Duration {
	if r := e.Tool.Request; r != nil && r.Timeout > 0 {
		return time.Duration(r.Timeout)
	}
	return e.Skill.CallTimeout()
}

// keepsDeadline reports whether backend ends the call at timeout itself
// (it is selfTimed, and the tool's timeout is its skill's), so that the
// pipeline need not set a deadline of its own: a context and a timer a
// call.
func keepsDeadline(backend mcpgate.Backend, e *registry.Entry, timeout time.Duration) bool {
	st, ok := backend.(selfTimed)
	return ok && st.EndsCallsAtTimeout() && timeout == e.Skill.CallTimeout()
}

// checkOutput enforces the tool's output schema on a successful result:
// structured content must be present and valid.
func checkOutput(e *registry.Entry, res *mcpgate.Result) *mcpgate.Result {
	if e.Output == nil || len(res.Raw) > 0 {
		return res
	}
	if len(res.StructuredContent) == 0 {
		return mcpgate.ErrorResult("Tool %s declares an output schema, but the backend returned no structured content.", e.Name)
	}
	if err := e.Output.Validate(res.StructuredContent); err != nil {
		return mcpgate.ErrorResult("The response of tool %s does not match its output schema:\n%s", e.Name, indent(mcpgate.ErrorMessage(err)))
	}
	return res
}

// record reports the call's outcome.
func (p *Pipeline) record(call *mcpgate.Call, res *mcpgate.Result, err error, d time.Duration) {
	outcome := resultOutcome(res, err)
	if outcome == mcpgate.EINTERNAL {
		p.opts.Logger.Error("tool call failed", "agent", call.Agent.ID, "tool", call.ToolName, "err", err)
	}
	if p.opts.Recorder == nil {
		return
	}
	tool := call.ToolName
	if call.Tool == nil {
		tool = "(unknown)" // keep label cardinality bounded
	}
	p.opts.Recorder.ObserveCall(call.Agent.ID, tool, outcome, d)
}

// indent puts each line of a list under a heading.
func indent(s string) string {
	out := make([]byte, 0, len(s)+16)
	out = append(out, "- "...)
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] == '\n' {
			out = append(out, "- "...)
		}
	}
	return string(out)
}
