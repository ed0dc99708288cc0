package bus

import (
	"context"

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
	for err == nil {
		var reply *mcpgate.Message
		reply, after, err = b.readReplies(ctx, channelID, msgID, after, onDelta)
		if reply != nil {
			return reply, nil
		} else if err != nil {
			break
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, err
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
