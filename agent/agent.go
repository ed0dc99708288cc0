// Package agent is the backend for skills of kind agent: it turns a tool
// call into a chat_message on a channel, delivers it to the agent's workers
// (they pull it from their inbox stream, or the backend pushes it to the
// skill's push_url), and turns the agent's reply into the tool result,
// relaying agent_reply_delta messages as progress notifications.
//
// The package imports the root mcpgate package, netguard, h1, pushsig and
// the standard library; it must not import a store implementation, the bus
// implementation, the server or another backend: its dependencies are the
// small interfaces declared here.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/h1"
	"github.com/mcpgate/mcpgate/netguard"
)

// Bus posts messages, waits for replies and knows which agents have a
// worker connected. The bus package implements it.
type Bus interface {
	// Post stores m and wakes whoever waits for it, on every replica.
	Post(ctx context.Context, m *mcpgate.Message) error
	// Ask posts m as Post does, calls posted once it is stored, and returns
	// the final reply to it, calling onDelta for each agent_reply_delta in
	// order, until ctx ends (then ctx.Err()).
	Ask(ctx context.Context, m *mcpgate.Message, posted func(), onDelta func(*mcpgate.Message)) (*mcpgate.Message, error)
	// Online reports whether a worker of the agent's skill holds an inbox
	// stream on any replica.
	Online(ctx context.Context, agentID, skill string) (bool, error)
}

// Channels finds and creates channels and acknowledges pushed messages: the
// part of mcpgate.MessageStore the backend needs.
type Channels interface {
	CreateChannel(ctx context.Context, c *mcpgate.Channel) error
	FindChannel(ctx context.Context, id string) (*mcpgate.Channel, error)
	AckMessage(ctx context.Context, agentID, id string) error
}

// Options configures a Backend. Bus and Channels are required; a zero
// field of the others gives the default.
type Options struct {
	Bus      Bus
	Channels Channels
	// Guard holds the HTTP clients for push delivery; default a new
	// netguard.Guard.
	Guard *netguard.Guard
	// LookupEnv expands the skill's push_secret and header references
	// (${env:NAME}) at call time; default os.LookupEnv.
	LookupEnv mcpgate.LookupFunc
	// Logger is optional; nil discards.
	Logger *slog.Logger
	// Now is the clock that signs pushed envelopes; default time.Now.
	Now func() time.Time
	// PushBackoff is the first wait before a failed push is retried; each
	// retry doubles it. Default one second.
	PushBackoff time.Duration
	// PresenceCheck is how often a call waiting for a pull worker's reply
	// asks Bus.Online again, to end with EUNAVAILABLE soon after the last
	// worker of the agent's skill is gone; default DefaultPresenceCheck.
	// It should be the bus's heartbeat.
	PresenceCheck time.Duration
	// Keep reports whether the message of a call whose caller stopped
	// waiting stays for the agent's workers, its reply kept, instead of
	// being withdrawn with a cancel message. Durable tasks will say yes;
	// nil keeps none.
	Keep func(call *mcpgate.Call) bool
}

// DefaultPresenceCheck is Options.PresenceCheck's default.
const DefaultPresenceCheck = 2 * time.Second

// Backend runs the tools of agent skills. It is safe for concurrent use.
type Backend struct {
	opts     Options
	channels channelCache
	pushers  [2]*http.Client // per policy (strict, private)
}

var _ mcpgate.Backend = (*Backend)(nil)

// New returns a Backend. opts, opts.Bus and opts.Channels are required.
func New(opts *Options) *Backend {
	b := &Backend{opts: *opts}
	if b.opts.Guard == nil {
		b.opts.Guard = netguard.New(nil)
	}
	// Plain-HTTP push targets are called over h1, on the pushing
	// goroutine; HTTPS stays on the guard's transport.
	for i, p := range []netguard.Policy{{}, {AllowPrivate: true}} {
		b.pushers[i] = h1.Client(b.opts.Guard.Client(p), b.opts.Guard.Dialer(p))
	}
	if b.opts.LookupEnv == nil {
		b.opts.LookupEnv = os.LookupEnv
	}
	if b.opts.Logger == nil {
		b.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if b.opts.Now == nil {
		b.opts.Now = time.Now
	}
	if b.opts.PushBackoff <= 0 {
		b.opts.PushBackoff = time.Second
	}
	if b.opts.PresenceCheck <= 0 {
		b.opts.PresenceCheck = DefaultPresenceCheck
	}
	if b.opts.Keep == nil {
		b.opts.Keep = func(*mcpgate.Call) bool { return false }
	}
	return b
}

// errOffline is the cause of a call's end when push delivery found the
// agent unreachable, or the last pull worker of its skill went away.
var errOffline = errors.New("agent unreachable")

// ReportsProgress reports true: the agent's deltas are the call's
// progress, and the pipeline adds none.
func (b *Backend) ReportsProgress() bool { return true }

// EndsCallsAtTimeout reports true: CallTool ends a call at its skill's
// timeout with ETIMEOUT, so the pipeline sets no deadline of its own.
func (b *Backend) EndsCallsAtTimeout() bool { return true }

// CallTool posts the call as a chat_message on its channel, delivers it,
// and waits for the reply under the skill's timeout. It returns
// EUNAVAILABLE at once when no worker can take the message, ETIMEOUT
// "Agent reply timeout" when the agent does not answer in time, and
// ECANCELED (after telling the agent with a cancel message) when the
// caller gives up. A channel the call may not use is a result with IsError.
func (b *Backend) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	var signer *signer
	if call.Skill.Delivery == mcpgate.DeliveryPush {
		var err error
		if signer, err = b.newSigner(call.Skill); err != nil {
			return mcpgate.ErrorResult("%s", mcpgate.ErrorMessage(err)), nil
		}
	} else if online, err := b.opts.Bus.Online(ctx, call.Agent.ID, call.Skill.Name); err != nil {
		return nil, fmt.Errorf("agent %s: presence: %w", call.Agent.ID, err)
	} else if !online {
		return nil, offline(call)
	}
	res, err := b.chatRoundTrip(ctx, call, signer)
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND && call.SessionID != "" && b.channels.find(sessionChannelID(call)) != nil {
		// The cached channel is gone with its agent, and nothing was
		// posted: open the session's channel anew.
		b.channels.forget(sessionChannelID(call))
		res, err = b.chatRoundTrip(ctx, call, signer)
	}
	return res, err
}

// chatRoundTrip makes the call's chat_message and runs its round trip.
func (b *Backend) chatRoundTrip(ctx context.Context, call *mcpgate.Call, signer *signer) (*mcpgate.Result, error) {
	msg, err := b.chatMessage(ctx, call)
	if c := mcpgate.ErrorCode(err); c == mcpgate.EFORBIDDEN || c == mcpgate.EINVALID {
		return mcpgate.ErrorResult("%s", mcpgate.ErrorMessage(err)), nil
	} else if err != nil {
		return nil, err
	}
	return b.roundTrip(ctx, call, msg, signer)
}

// chatMessage returns the call's chat_message on the channel it talks on.
// The chat tool's arguments are checked before a channel is made. Errors
// with EINVALID or EFORBIDDEN are the caller's to fix.
func (b *Backend) chatMessage(ctx context.Context, call *mcpgate.Call) (*mcpgate.Message, error) {
	var a chatArgs
	if isChat(call) {
		var err error
		if a, err = chatArguments(call); err != nil {
			return nil, err
		} else if a.Message == "" {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "%s needs a message", call.Tool.Name)
		}
	}
	ch, err := b.channel(ctx, call, a.ContextID)
	if err != nil {
		return nil, err
	}
	return newChatMessage(ch, call, a.Message), nil
}

// roundTrip posts msg, delivers it by push when signer is set, and waits
// for its reply. A failure to post ends the call as a failure to wait does.
func (b *Backend) roundTrip(ctx context.Context, call *mcpgate.Call, msg *mcpgate.Message, signer *signer) (*mcpgate.Result, error) {
	ctx, cancelTimeout := context.WithTimeout(ctx, callTimeout(ctx, call.Skill))
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := func() bool { return false }
	defer func() { stop() }()
	posted := func() {
		if signer != nil {
			go b.push(ctx, cancel, call.Skill, msg, signer)
		} else {
			stop = b.watch(ctx, cancel, call)
		}
	}
	var n float64
	reply, err := b.opts.Bus.Ask(ctx, msg, posted, func(d *mcpgate.Message) {
		n++
		call.Notifier.Progress(n, 0, d.Body.Text)
	})
	if err != nil {
		return nil, b.ended(ctx, call, msg, signer, err)
	}
	return result(reply), nil
}

// watch ends the call with errOffline as the cause once no worker of the
// agent's skill is online on any replica: the wait would be for nothing.
// It asks every PresenceCheck until ctx ends or stop is called, and when
// the answer is no, asks once more half a PresenceCheck later, so that a
// worker whose stream is reconnecting (agentkit's first retry waits
// 250 ms) is not taken for gone. A failure to ask is no answer; the next
// check asks again. The checks run on a timer rather than a goroutine of
// the call's: most calls end long before their first check, and a
// goroutine and a ticker for each cost a goroutine started and woken a
// call, for checks that most calls never make.
func (b *Backend) watch(ctx context.Context, cancel context.CancelCauseFunc, call *mcpgate.Call) (stop func() bool) {
	// Set far off, then due once t is assigned, so that check sees t.
	var t *time.Timer
	check := func() {
		if ctx.Err() != nil {
			return
		}
		if b.gone(ctx, call) && mcpgate.Sleep(ctx, b.opts.PresenceCheck/2) && b.gone(ctx, call) {
			cancel(errOffline)
			return
		}
		if ctx.Err() == nil {
			t.Reset(b.opts.PresenceCheck)
		}
	}
	t = time.AfterFunc(time.Hour, check)
	t.Reset(b.opts.PresenceCheck)
	return t.Stop
}

// gone reports whether the bus says for sure that no worker of the call's
// skill is online.
func (b *Backend) gone(ctx context.Context, call *mcpgate.Call) bool {
	online, err := b.opts.Bus.Online(ctx, call.Agent.ID, call.Skill.Name)
	return err == nil && !online
}

// ended maps the end of a wait without a reply to the call's error: the
// agent went offline, the timeout passed, or the caller canceled. Then
// msg is withdrawn (unless Keep keeps it): the agent hears of it with a
// cancel message, which also acknowledges msg, so that no worker that
// connects later runs a request nobody will read.
func (b *Backend) ended(ctx context.Context, call *mcpgate.Call, msg *mcpgate.Message, s *signer, err error) error {
	if msg.ID == "" || ctx.Err() == nil || b.opts.Keep(call) {
		return b.endError(ctx, call, err)
	}
	if errors.Is(ctx.Err(), context.Canceled) && context.Cause(ctx) == context.Canceled {
		b.postCancel(ctx, msg, s) // the caller canceled: it does not wait for the error
	} else {
		go b.postCancel(ctx, msg, s) // the caller waits for the error, not for the agent
	}
	return b.endError(ctx, call, err)
}

// endError is the error of a call that ended without a reply.
func (b *Backend) endError(ctx context.Context, call *mcpgate.Call, err error) error {
	switch {
	case errors.Is(context.Cause(ctx), errOffline):
		return offline(call)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return mcpgate.Errorf(mcpgate.ETIMEOUT, "Agent reply timeout")
	case errors.Is(ctx.Err(), context.Canceled):
		return mcpgate.Errorf(mcpgate.ECANCELED, "the call of %s was canceled", call.Tool.Name)
	}
	return err
}

// offline is the error of a call no worker of the agent can take.
func offline(call *mcpgate.Call) error {
	return mcpgate.Errorf(mcpgate.EUNAVAILABLE, "agent %q is offline: no worker of skill %q is connected", call.Agent.ID, call.Skill.Name)
}

// cancelTimeout bounds posting a cancel message after the call's own
// context ended.
const cancelTimeout = 5 * time.Second

// postCancel tells the agent's workers that the caller gave up on msg:
// through their inbox, and by push when s is set.
func (b *Backend) postCancel(ctx context.Context, msg *mcpgate.Message, s *signer) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	m := &mcpgate.Message{
		ChannelID: msg.ChannelID, AgentID: msg.AgentID, Skill: msg.Skill,
		Type: mcpgate.MessageCancel, InReplyTo: msg.ID, Sender: msg.Sender,
	}
	if err := b.opts.Bus.Post(ctx, m); err != nil {
		b.opts.Logger.Warn("post cancel message", "message", msg.ID, "err", err)
		return
	}
	if s != nil {
		b.pushCancel(ctx, m, s)
	}
}

// callTimeout returns the skill's timeout, shortened to the caller's
// deadline if that comes first.
func callTimeout(ctx context.Context, skill *mcpgate.Skill) time.Duration {
	timeout := skill.CallTimeout()
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	return timeout
}
