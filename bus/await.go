package bus

import (
	"context"
	"time"

	"github.com/mcpgate/mcpgate"
)

// pageSize is how many messages Await reads from the store at a time.
const pageSize = 100

// Await returns the final reply (agent_reply or agent_error) to the message
// msgID of the channel, calling onDelta (when not nil) for each
// agent_reply_delta to it, in order and each exactly once, until ctx ends;
// then it returns ctx.Err(). It subscribes before it reads the store, so a
// reply posted at any time, even before Await is called, is found. Returns
// ENOTFOUND if msgID is not a message of the channel.
func (b *Bus) Await(ctx context.Context, channelID, msgID string, onDelta func(*mcpgate.Message)) (*mcpgate.Message, error) {
	topic := replyTopic(channelID)
	wake := b.hub.subscribe(topic)
	defer b.hub.unsubscribe(topic, wake)
	after, err := b.startSeq(ctx, channelID, msgID)
	if err != nil {
		return nil, waitError(ctx, err)
	}
	return b.replies(ctx, wake, nil, channelID, msgID, after, true, onDelta)
}

// Ask posts m (as Post does) and returns its final reply (as Await does),
// calling posted, when not nil, once m is stored. It waits for the
// replies before it posts, so it reads the store only when woken: no
// reply can be posted before m is, and each posted reply wakes it. On a
// bus without a Broker only the replies to m wake it (answer.go);
// otherwise every reply posted on the channel does. Ask gives m an ID
// when it has none; a store that can may then hand m to an inbox stream
// before it is stored (FirstHandingStore), and m keeps that ID even when
// the post fails.
func (b *Bus) Ask(ctx context.Context, m *mcpgate.Message, posted func(), onDelta func(*mcpgate.Message)) (*mcpgate.Message, error) {
	var a *asker
	var wake <-chan struct{}
	madeID := m.ID == ""
	if b.broker == nil {
		if madeID {
			m.ID = mcpgate.NewOrderedID("msg_", time.Now()) // to wait under before it is posted
		}
		a = b.askers.add(m)
		defer b.askers.remove(m.ID)
		wake = a.wake
	} else {
		topic := replyTopic(m.ChannelID)
		c := b.hub.subscribe(topic)
		defer b.hub.unsubscribe(topic, c)
		wake = c
	}
	if err := b.post(ctx, m, madeID); err != nil {
		return nil, err // m keeps its ID: it may have reached a worker (handFirst)
	}
	if posted != nil {
		posted()
	}
	return b.replies(ctx, wake, a, m.ChannelID, m.ID, m.Seq, false, onDelta)
}

// replies returns the final reply to msgID among the channel's messages
// after seq after, reading them at once when read is set and then on every
// signal of wake, until ctx ends. A final reply handed over to a (when
// not nil) is returned without a read.
func (b *Bus) replies(ctx context.Context, wake <-chan struct{}, a *asker, channelID, msgID string, after int64, read bool, onDelta func(*mcpgate.Message)) (*mcpgate.Message, error) {
	for {
		if a != nil && read {
			if reply := a.take(); reply != nil {
				return reply, nil
			} else if err := a.failed(); err != nil {
				return nil, err
			}
		}
		if read {
			reply, next, err := b.readReplies(ctx, channelID, msgID, after, onDelta)
			if reply != nil {
				return reply, nil
			} else if err != nil {
				return nil, waitError(ctx, err)
			}
			after = next
		}
		select {
		case <-wake:
			read = true
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// waitError is the error of a wait that failed with err: ctx's error when
// ctx ended, since a store call cut short by it fails too.
func waitError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// startSeq returns the seq after which replies to msgID may be: msgID's
// own, since a reply is posted after the message it answers.
func (b *Bus) startSeq(ctx context.Context, channelID, msgID string) (int64, error) {
	m, err := b.store.FindMessage(ctx, msgID)
	if err != nil {
		return 0, err
	}
	if m.ChannelID != channelID {
		return 0, mcpgate.Errorf(mcpgate.ENOTFOUND, "message %q not found in channel %q", msgID, channelID)
	}
	return m.Seq, nil
}

// readReplies reads the channel's messages after seq after, passing the
// deltas to msgID to onDelta, and returns its final reply if it is there,
// or else the seq up to which it read.
func (b *Bus) readReplies(ctx context.Context, channelID, msgID string, after int64, onDelta func(*mcpgate.Message)) (*mcpgate.Message, int64, error) {
	for {
		msgs, err := b.store.ListMessages(ctx, channelID, after, pageSize)
		if err != nil {
			return nil, after, err
		}
		for _, m := range msgs {
			after = m.Seq
			if m.InReplyTo != msgID {
				continue
			}
			if m.Type.Final() {
				return m, after, nil
			}
			if m.Type == mcpgate.MessageReplyDelta && onDelta != nil {
				onDelta(m)
			}
		}
		if len(msgs) < pageSize {
			return nil, after, nil
		}
	}
}
