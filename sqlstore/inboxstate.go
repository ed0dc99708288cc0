package sqlstore

import "sync"

// Inbox state. On an engine whose one writer connection belongs to one
// serving process (SQLite; group commit), a chat_message posted for an
// offered inbox stream (PostHandedFirst) may be handed to the stream
// before its statements run, when the Store knows without reading the
// database what its check would say:
//
//   - the channel is the message's agent's, of the message's skill: the
//     channel's agent and skill never change, and the Store learns them
//     from a check that read them (a channel deleted since, with its
//     agent, fails the insert's foreign key);
//   - no message of the agent's inbox is claimable: a check found none
//     (for every skill), nothing since made one claimable (an
//     undelivered message to the agent's workers, a release), and none of
//     the messages delivered since, and not acknowledged, was delivered
//     at or before the time that makes it claimable again.
//
// The state is kept as the statements run, in the writer's transaction,
// before they commit; a rollback forgets it all. It errs on the side of
// reading: an agent it has not checked, or a message held past its
// visibility whose acknowledgement it did not see, sends the post to the
// database's check, and a check that finds the inbox free teaches it
// again (dropping what was held before the check's time). What it cannot see is a message whose delivery time
// passed its visibility because the stream holding it stopped renewing
// it without ending (a stream that ends releases what it holds): then a
// newer message may reach a stream before that one is claimed again, out
// of seq order, as a check made a moment before its expiry would let it.

// maxKnownChannels bounds the channels the state remembers; past it, it
// forgets them all and learns them again from the checks.
const maxKnownChannels = 1 << 16

// inboxState is what a Store knows of its agents' inboxes without reading
// them. Its methods are safe for concurrent use. A nil state (an engine
// without group commit) knows nothing and learns nothing.
type inboxState struct {
	mu       sync.Mutex
	gen      uint64 // counts the changes that may make a message claimable
	agents   map[string]*agentInbox
	channels map[string]channelFacts
}

// channelFacts are a channel's agent and skill.
type channelFacts struct{ agent, skill string }

// agentInbox is the state of one agent's inbox.
type agentInbox struct {
	// free is set by a check that found nothing claimable in the inbox,
	// and cleared by anything that may have made a message claimable
	// since, but time.
	free bool
	// held maps the messages delivered since to their delivery time (Unix
	// microseconds), until they are acknowledged; byTime orders them,
	// oldest first, with entries left behind by a later delivery.
	held   map[string]int64
	byTime deliveries
}

// newInboxState returns a state that knows nothing yet.
func newInboxState() *inboxState {
	return &inboxState{agents: map[string]*agentInbox{}, channels: map[string]channelFacts{}}
}

// agent returns the agent's inbox, made when unknown; under st.mu.
func (st *inboxState) agent(id string) *agentInbox {
	a := st.agents[id]
	if a == nil {
		a = &agentInbox{held: map[string]int64{}}
		st.agents[id] = a
	}
	return a
}

// free reports whether the state knows that no message of the agent's
// inbox is claimable when messages delivered at or before at are.
func (st *inboxState) free(agentID string, at int64) bool {
	if st == nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	a := st.agents[agentID]
	return a != nil && a.free && a.oldest() > at
}

// channel reports whether the state knows channel id to be the agent's,
// of the skill.
func (st *inboxState) channel(id, agentID, skill string) bool {
	if st == nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.channels[id]
	return ok && f.agent == agentID && f.skill == skill
}

// learnChannel records channel id's agent and skill, read by a check.
func (st *inboxState) learnChannel(id, agentID, skill string) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.channels) >= maxKnownChannels {
		clear(st.channels)
	}
	st.channels[id] = channelFacts{agent: agentID, skill: skill}
}

// generation returns the count of changes that may have made a message
// claimable, for checked.
func (st *inboxState) generation() uint64 {
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.gen
}

// checked records that a check, begun at generation gen, found no
// message of the agent's inbox (of any skill) claimable when those
// delivered at or before at are: unless something changed meanwhile, the
// inbox is free, and the messages it held delivered at or before at were
// acknowledged since.
func (st *inboxState) checked(agentID string, gen uint64, at int64) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gen != gen {
		return
	}
	a := st.agent(agentID)
	a.free = true
	for len(a.byTime) > 0 && a.byTime[0].at <= at {
		d := a.byTime.pop()
		if a.held[d.id] == d.at {
			delete(a.held, d.id)
		}
	}
}

// delivered records that message id of the agent was delivered at at.
func (st *inboxState) delivered(agentID, id string, at int64) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	a := st.agent(agentID)
	a.held[id] = at
	a.byTime.push(delivery{id: id, at: at})
	if len(a.byTime) > 2*len(a.held)+64 {
		a.rebuild() // acknowledged behind one still held
	}
}

// acked records that message id of the agent was acknowledged.
func (st *inboxState) acked(agentID, id string) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if a := st.agents[agentID]; a != nil {
		delete(a.held, id)
	}
}

// unfree records that a message of the agent's inbox may be claimable.
func (st *inboxState) unfree(agentID string) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.gen++
	if a := st.agents[agentID]; a != nil {
		a.free = false
	}
}

// forget drops everything the state knows (a rollback, a deleted agent).
func (st *inboxState) forget() {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.gen++
	clear(st.agents)
	clear(st.channels)
}

// oldest returns the delivery time of the oldest message a holds, past
// every time when it holds none; it drops the entries left behind.
func (a *agentInbox) oldest() int64 {
	for len(a.byTime) > 0 {
		d := a.byTime[0]
		if at, ok := a.held[d.id]; ok && at == d.at {
			return d.at
		}
		a.byTime.pop()
	}
	return 1<<63 - 1
}

// rebuild makes byTime anew from held.
func (a *agentInbox) rebuild() {
	a.byTime = a.byTime[:0]
	for id, at := range a.held {
		a.byTime.push(delivery{id: id, at: at})
	}
}

// delivery is one delivery of a message.
type delivery struct {
	id string
	at int64
}

// deliveries is a binary min-heap of deliveries by time.
type deliveries []delivery

// push adds d.
func (h *deliveries) push(d delivery) {
	*h = append(*h, d)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// pop removes and returns the earliest delivery; h is not empty.
func (h *deliveries) pop() delivery {
	s := *h
	d, n := s[0], len(s)-1
	s[0] = s[n]
	s[n] = delivery{}
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1].at < s[c].at {
			c++
		}
		if s[i].at <= s[c].at {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return d
}
