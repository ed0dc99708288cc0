package bus

import (
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate"
)

// Answers in process. A call waiting in Ask registers its message here; a
// final reply to it posted on this replica is handed to it before it is
// stored when the store is bound to take it (asker.claim), else once its
// statements ran, so that the call need not read the reply back from the
// store (the store keeps it as the durable record). Only a bus without a
// Broker hands replies over: then every message is posted through this
// Bus (a post elsewhere would wake no waiter here either), so a call that
// was handed its final reply and saw no delta to its message posted knows
// there is nothing else to read. A delta, or a Broker, sends the call to the store
// as before, which delivers the deltas in seq order. Such a call is woken
// by its asker alone (asker.wake): by its final reply handed over, a
// delta to its message stored, or its end; not by every reply posted on
// its channel, which is most often a session's and holds its calls one
// after the other, so that the previous call's reply, stored after it was
// handed over, would wake the next call for a read that finds nothing.

// asker is one waiting call's slot for its final reply.
type asker struct {
	// channelID, agentID and skill are those of the message the call
	// waits on, as its poster named them, and chat whether it is a
	// chat_message: what a reply must match to be handed over before it
	// is stored, and what the store would give it (claim).
	channelID, agentID, skill string
	chat                      bool

	// wake has a signal when the call has something new: its final
	// reply, a delta stored, or its end.
	wake chan struct{}

	mu     sync.Mutex
	deltas bool             // a delta to the message was posted here
	final  *mcpgate.Message // the final reply, once stored or claimed
	err    error            // the message was not stored after all (Bus.lost)
}

// askers holds the calls of this replica waiting in Ask, by message ID.
type askers struct {
	mu   sync.Mutex
	byID map[string]*asker
}

// add registers a waiting call for the replies to m.
func (as *askers) add(m *mcpgate.Message) *asker {
	a := &asker{channelID: m.ChannelID, agentID: m.AgentID, skill: m.Skill, chat: m.Type == mcpgate.MessageChat,
		wake: make(chan struct{}, 1)}
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.byID == nil {
		as.byID = map[string]*asker{}
	}
	as.byID[m.ID] = a
	return a
}

// remove withdraws the call waiting for the replies to msgID.
func (as *askers) remove(msgID string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	delete(as.byID, msgID)
}

// find returns the call waiting for the replies to msgID, or nil.
func (as *askers) find(msgID string) *asker {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.byID[msgID]
}

// noteDelta records that a delta is being posted; it must be called
// before the delta is stored, so that a final reply stored after it finds
// it noted.
func (a *asker) noteDelta() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.deltas = true
}

// give hands over the stored final reply m.
func (a *asker) give(m *mcpgate.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.final = m
}

// answers reports whether the store is bound to take the final reply m
// to the call: m answers a chat_message whose poster named its agent and
// skill, on its channel, from its agent (or from no agent named, which
// the store takes from the channel).
func (a *asker) answers(m *mcpgate.Message) bool {
	return a.chat && a.agentID != "" && a.skill != "" && m.ChannelID == a.channelID &&
		(m.AgentID == "" || m.AgentID == a.agentID)
}

// claim hands over c, a final reply that answers (see answers), before it
// is stored, unless the call has a final reply already (the store would
// refuse a second one), a delta (such a call reads its replies from the
// store) or an error (its chat_message may have been lost, and the store
// must check the reply against it); it reports whether it did.
func (a *asker) claim(c *mcpgate.Message) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.deltas || a.final != nil || a.err != nil {
		return false
	}
	a.final = c
	return true
}

// notify wakes the call.
func (a *asker) notify() { notify(a.wake) }

// fail ends the call with err.
func (a *asker) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = err
}

// failed returns the error the call ended with, or nil.
func (a *asker) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// take returns the final reply handed over when no delta was posted, or
// nil: then the call reads the store.
func (a *asker) take() *mcpgate.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.deltas {
		return nil
	}
	return a.final
}

// handed returns a copy of the stored message m as a read of the store
// returns it: its body goes through the JSON the store keeps (raw JSON
// compacted, empty lists dropped), and the copy shares nothing the poster
// may still use.
func handed(m *mcpgate.Message) (*mcpgate.Message, error) {
	c := *m
	if m.Body.Parts == nil && m.Body.Data == nil && m.Body.Attachments == nil {
		return &c, nil // text alone reads back as it is
	}
	raw, err := json.Marshal(m.Body)
	if err != nil {
		return nil, err
	}
	c.Body = mcpgate.MessageBody{}
	if err := json.Unmarshal(raw, &c.Body); err != nil {
		return nil, err
	}
	return &c, nil
}
