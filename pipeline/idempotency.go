package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// IdempotencyStore keeps idempotency keys; see mcpgate.IdempotencyStore.
type IdempotencyStore interface {
	ClaimIdempotency(ctx context.Context, c *mcpgate.IdempotencyClaim, now time.Time) (*mcpgate.IdempotencyClaim, error)
	CompleteIdempotency(ctx context.Context, c *mcpgate.IdempotencyClaim, result []byte) error
	ReleaseIdempotency(ctx context.Context, c *mcpgate.IdempotencyClaim) error
}

// IdempotencyKeyArgument is the argument that carries a call's idempotency
// key.
const IdempotencyKeyArgument = "idempotency_key"

// ReplayMeta is the key the gateway sets to true in a replayed result's
// _meta.
const ReplayMeta = "mcpgate/idempotent_replay"

// DefaultIdempotencyTTL is how long a key's result is kept when
// Options.IdempotencyTTL is zero.
const DefaultIdempotencyTTL = 24 * time.Hour

// DefaultClaimGrace is added to a tool's deadline (its timeout plus the
// pipeline's grace) before an unfinished claim counts as failed, when
// Options.ClaimGrace is zero: a gateway killed mid-call leaves its claim,
// and a retry after that may run.
const DefaultClaimGrace = 30 * time.Second

// stage runs the rest of a call after a stage.
type stage func(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState) (*mcpgate.Result, error)

// idempotency takes the call's idempotency key out of its arguments and,
// when there is one, claims it before running next: a finished call with
// the same key and arguments is replayed, one in flight is ECONFLICT, and
// one with other arguments EMISMATCH.
func (p *Pipeline) idempotency(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState, next stage) (*mcpgate.Result, error) {
	key, err := takeIdempotencyKey(e, call)
	if err != nil {
		return nil, err
	}
	if key == "" || p.opts.Idempotency == nil {
		return next(ctx, e, call, st)
	}
	st.key = key
	sctx, span := p.stage(ctx, "mcpgate.idempotency")
	c, held, err := p.claim(sctx, e, call, st)
	span.End(err)
	if err != nil {
		return nil, err
	}
	if held != nil {
		if res, ok, err := p.attachRetry(ctx, e, call, st, c, held); ok {
			return res, err
		}
		return replay(held, c, st)
	}
	res, err := next(ctx, e, call, st)
	p.settle(ctx, c, res, err)
	return res, err
}

// claim hashes the call and claims its key; held is the row holding the key
// when the claim failed.
func (p *Pipeline) claim(ctx context.Context, e *registry.Entry, call *mcpgate.Call, st *callState) (c, held *mcpgate.IdempotencyClaim, err error) {
	if st.hash, err = mcpgate.HashArguments(e.Name, call.Arguments); err != nil {
		return nil, nil, err
	}
	now := p.opts.Now()
	c = &mcpgate.IdempotencyClaim{
		Identity: callerIdentity(call), AgentID: call.Agent.ID, Key: st.key, Hash: st.hash,
		ClaimedAt: now, StaleAt: now.Add(p.claimLife(e)), ExpiresAt: now.Add(p.idempotencyTTL()),
	}
	held, err = p.opts.Idempotency.ClaimIdempotency(ctx, c, now)
	return c, held, err
}

// claimLife is how long an unfinished claim holds its key: the tool's
// deadline with grace, plus the approval wait when the tool needs one, so
// that a retry never takes over the key of a call still waiting.
func (p *Pipeline) claimLife(e *registry.Entry) time.Duration {
	d := toolTimeout(e) + deadlineGrace + p.claimGrace()
	if e.Skill.NeedsApproval(e.Tool) {
		d += e.Skill.ApprovalWait()
	}
	return d
}

// idempotencyTTL is how long a key's result is kept.
func (p *Pipeline) idempotencyTTL() time.Duration {
	if p.opts.IdempotencyTTL > 0 {
		return p.opts.IdempotencyTTL
	}
	return DefaultIdempotencyTTL
}

// replay answers a call whose key another call holds.
func replay(held, c *mcpgate.IdempotencyClaim, st *callState) (*mcpgate.Result, error) {
	switch {
	case held.Hash != c.Hash:
		return nil, mcpgate.Errorf(mcpgate.EMISMATCH, "idempotency key %q was used for a call of another tool or with other arguments; use a new key for a different call", c.Key)
	case !held.Done():
		return nil, mcpgate.Errorf(mcpgate.ECONFLICT, "a call with idempotency key %q is still in flight; wait for its result, or rotate the key to make a new call", c.Key)
	}
	st.replayed = true
	return &mcpgate.Result{Raw: markReplay(held.Result)}, nil
}

// settle stores the call's result under its key, or releases the key after
// a gateway error (timeout, unavailable, canceled, ...), or a result whose
// backend could not serve the call (Failure), so that a retry may run. A
// result with isError is otherwise stored like any other. It runs even when
// the caller has gone.
func (p *Pipeline) settle(ctx context.Context, c *mcpgate.IdempotencyClaim, res *mcpgate.Result, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err == nil && res.Failure == "" {
		var b []byte
		if b, err = json.Marshal(res); err == nil {
			err = p.opts.Idempotency.CompleteIdempotency(ctx, c, b)
		}
		if err != nil {
			p.opts.Logger.Warn("idempotency result not stored", "agent", c.AgentID, "key", c.Key, "err", err)
		}
		return
	}
	if err := p.opts.Idempotency.ReleaseIdempotency(ctx, c); err != nil {
		p.opts.Logger.Warn("idempotency key not released", "agent", c.AgentID, "key", c.Key, "err", err)
	}
}

// keyMarker finds calls that may carry a key without decoding the others.
var keyMarker = []byte(`"` + IdempotencyKeyArgument + `"`)

// takeIdempotencyKey returns the call's idempotency key, "" when it has
// none, and takes it out of the arguments unless the tool's input schema
// declares that property. Returns EINVALID for a key that is not a string
// of 1 to 255 printable characters.
func takeIdempotencyKey(e *registry.Entry, call *mcpgate.Call) (string, error) {
	if !bytes.Contains(call.Arguments, keyMarker) {
		return "", nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(call.Arguments, &args) != nil {
		return "", nil // validation reports it
	}
	raw, ok := args[IdempotencyKeyArgument]
	if !ok {
		return "", nil
	}
	var key string
	if json.Unmarshal(raw, &key) != nil || !validIdempotencyKey(key) {
		return "", mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: %s must be a string of 1 to 255 printable characters", IdempotencyKeyArgument)
	}
	if !declaresProperty(e.Tool.InputSchema, IdempotencyKeyArgument) {
		delete(args, IdempotencyKeyArgument)
		b, err := json.Marshal(args)
		if err != nil {
			return "", err
		}
		call.Arguments = b
	}
	return key, nil
}

// validIdempotencyKey reports whether key is 1 to 255 printable characters.
func validIdempotencyKey(key string) bool {
	n := utf8.RuneCountInString(key)
	if n < 1 || n > 255 || !utf8.ValidString(key) {
		return false
	}
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// declaresProperty reports whether an object schema names the property.
func declaresProperty(schema json.RawMessage, name string) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	_, ok := s.Properties[name]
	return ok
}

// markReplay returns a stored result with _meta[ReplayMeta] set to true.
// A result without _meta gets one in front and is otherwise the stored
// bytes; one with _meta is re-encoded with its members' values unchanged.
func markReplay(stored []byte) json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(stored, &top) != nil {
		return stored
	}
	meta, has := top["_meta"]
	if !has {
		body := bytes.TrimSpace(stored)[1:] // after '{'
		sep := ","
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("}")) {
			sep = ""
		}
		out := append([]byte(`{"_meta":{"`+ReplayMeta+`":true}`+sep), body...)
		return out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	m[ReplayMeta] = json.RawMessage("true")
	top["_meta"], _ = json.Marshal(m)
	b, err := json.Marshal(top)
	if err != nil {
		return stored
	}
	return b
}

// claimGrace returns Options.ClaimGrace, or DefaultClaimGrace.
func (p *Pipeline) claimGrace() time.Duration {
	if p.opts.ClaimGrace > 0 {
		return p.opts.ClaimGrace
	}
	return DefaultClaimGrace
}
