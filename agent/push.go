package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/pushsig"
)

// signer holds what a push request of one skill needs: its target, the
// expanded secret and headers.
type signer struct {
	target  *url.URL
	policy  netguard.Policy
	secret  []byte
	headers map[string]string
}

// newSigner prepares push delivery for a skill. Returns EINVALID when the
// skill has no usable push_url or push_secret, or a header references an
// unset variable, and EFORBIDDEN when the SSRF guard refuses the URL.
func (b *Backend) newSigner(skill *mcpgate.Skill) (*signer, error) {
	u, err := url.Parse(skill.PushURL)
	if skill.PushURL == "" || err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q delivers by push but its push_url %q is not an http or https URL", skill.Name, skill.PushURL)
	}
	s := &signer{target: u, policy: netguard.Policy{AllowPrivate: skill.AllowPrivate}, headers: map[string]string{}}
	if err := s.policy.Check(u); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "skill %q: push_url refused: %v", skill.Name, err)
	}
	if skill.PushSecret == "" {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q delivers by push but has no push_secret to sign envelopes with", skill.Name)
	}
	secret, err := mcpgate.ExpandSecrets(skill.PushSecret, b.opts.LookupEnv)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: push_secret: %s", skill.Name, mcpgate.ErrorMessage(err))
	}
	s.secret = []byte(secret)
	for k, v := range skill.Headers {
		if s.headers[k], err = mcpgate.ExpandSecrets(v, b.opts.LookupEnv); err != nil {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: header %s: %s", skill.Name, k, mcpgate.ErrorMessage(err))
		}
	}
	return s, nil
}

// push delivers msg to the skill's push_url, retrying with backoff until it
// is taken or ctx ends. A reply in the response is posted through the bus,
// where the call waiting for its reply finds it. A target that cannot be
// reached (it refuses connections or does not accept one in time) ends the
// call with errOffline as the cause, at any attempt: the agent is gone as a
// pull agent is without workers. Targets that answer badly are retried.
func (b *Backend) push(ctx context.Context, cancel context.CancelCauseFunc, skill *mcpgate.Skill, msg *mcpgate.Message, s *signer) {
	body, err := json.Marshal(msg)
	if err != nil {
		cancel(fmt.Errorf("encode envelope: %w", err))
		return
	}
	wait := b.opts.PushBackoff
	for attempt := 0; ; attempt++ {
		reply, err := b.pushOnce(ctx, skill, msg, body, s)
		if err == nil {
			b.delivered(ctx, msg, reply)
			return
		}
		if unreachable(err) {
			cancel(errOffline)
			return
		}
		b.opts.Logger.Warn("push delivery failed; retrying", "agent", msg.AgentID, "skill", msg.Skill, "message", msg.ID, "attempt", attempt+1, "err", err)
		if !mcpgate.Sleep(ctx, wait) {
			return
		}
		wait *= 2
	}
}

// unreachable reports whether a push failed because nothing takes
// connections at the target (refused, or not accepted within the dial
// timeout) or its name does not resolve, as opposed to a target that
// answered badly or slowly.
func unreachable(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, netguard.ErrBlocked) ||
		(errors.As(err, &dnsErr) && dnsErr.IsNotFound) ||
		(errors.As(err, &opErr) && opErr.Op == "dial" && opErr.Timeout())
}

// delivered acknowledges a pushed message, so that no inbox stream gets it
// too, and posts the reply the target answered with, if any.
func (b *Backend) delivered(ctx context.Context, msg *mcpgate.Message, reply *mcpgate.Message) {
	if err := b.opts.Channels.AckMessage(ctx, msg.AgentID, msg.ID); err != nil && ctx.Err() == nil {
		b.opts.Logger.Warn("acknowledge pushed message", "message", msg.ID, "err", err)
	}
	if reply == nil {
		return
	}
	err := b.opts.Bus.Post(ctx, reply)
	if err != nil && mcpgate.ErrorCode(err) != mcpgate.ECONFLICT && ctx.Err() == nil {
		b.opts.Logger.Error("post pushed reply", "message", msg.ID, "err", err)
	}
}

// pushReply is the body of a push target's 2xx response that carries the
// reply.
type pushReply struct {
	Type mcpgate.MessageType `json:"type"`
	Body mcpgate.MessageBody `json:"body"`
}

// pushOnce POSTs the envelope once. It returns the reply the target
// answered with (nil for "later, through the messages API") or an error
// for a status other than 2xx or a network failure.
func (b *Backend) pushOnce(ctx context.Context, skill *mcpgate.Skill, msg *mcpgate.Message, body []byte, s *signer) (*mcpgate.Message, error) {
	resp, err := b.send(ctx, s, msg, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, skill.ResponseLimit()+1))
	if err != nil {
		return nil, fmt.Errorf("read push response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("push target answered HTTP %d", resp.StatusCode)
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent || len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	return replyTo(msg, resp.StatusCode, data, skill.ResponseLimit()), nil
}

// send POSTs msg's signed body to the skill's push_url, with the
// message's trace context as the W3C headers.
func (b *Backend) send(ctx context.Context, s *signer, msg *mcpgate.Message, body []byte) (*http.Response, error) {
	names := make([]string, 0, len(s.headers))
	for k := range s.headers {
		names = append(names, k)
	}
	ctx = netguard.WithSecretHeaders(ctx, names)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("push request: %w", err)
	}
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mcpgate/"+mcpgate.Version)
	req.Header.Set(pushsig.MessageIDHeader, msg.ID)
	msg.Trace.SetHeaders(req.Header.Set)
	req.Header.Set(pushsig.Header, pushsig.Sign(s.secret, b.opts.Now(), body))
	return b.pusher(s.policy).Do(req)
}

// pusher returns the HTTP client of policy p.
func (b *Backend) pusher(p netguard.Policy) *http.Client {
	if p.AllowPrivate {
		return b.pushers[1]
	}
	return b.pushers[0]
}

// replyTo turns a push target's 2xx body into the reply to msg: the reply
// it holds, or an agent_error saying what is wrong with it.
func replyTo(msg *mcpgate.Message, status int, data []byte, limit int64) *mcpgate.Message {
	r := &mcpgate.Message{
		ChannelID: msg.ChannelID, AgentID: msg.AgentID, Skill: msg.Skill,
		InReplyTo: msg.ID, Sender: "agent:" + msg.AgentID,
	}
	var pr pushReply
	switch {
	case int64(len(data)) > limit:
		r.Type, r.Body.Text = mcpgate.MessageError, fmt.Sprintf("The agent's push endpoint answered with more than %d bytes.", limit)
	case json.Unmarshal(data, &pr) != nil || !pr.Type.Final():
		r.Type, r.Body.Text = mcpgate.MessageError, fmt.Sprintf(`The agent's push endpoint answered HTTP %d with a body that is not a reply: send {"type": "agent_reply", "body": {...}}, or 202 to reply later.`, status)
	default:
		r.Type, r.Body = pr.Type, pr.Body
	}
	return r
}

// pushCancelTimeout bounds pushing a cancel message.
const pushCancelTimeout = 2 * time.Second

// pushCancel delivers a cancel message to the skill's push_url once,
// without retries: the caller is gone.
func (b *Backend) pushCancel(ctx context.Context, m *mcpgate.Message, s *signer) {
	ctx, cancel := context.WithTimeout(ctx, pushCancelTimeout)
	defer cancel()
	body, err := json.Marshal(m)
	if err != nil {
		return
	}
	resp, err := b.send(ctx, s, m, body)
	if err != nil {
		b.opts.Logger.Warn("push cancel message", "message", m.ID, "err", err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		_ = b.opts.Channels.AckMessage(ctx, m.AgentID, m.ID)
	}
}
