package sqlstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpgate/mcpgate"
)

// Seq blocks. On an engine whose one writer connection belongs to one
// serving process (SQLite; group commit), posts take their seqs from
// blocks this Store reserves in memory instead of incrementing the
// agent's counter row (message_seqs) each: the leader of a batch reserves
// seqBlockSize seqs of an agent at once, when the block in memory has
// fewer left than the batch needs, in a statement of its own that commits
// before a post alone begins, or first thing in the transaction of a
// batch run in the open transaction (open.go; a rollback of it then
// empties the blocks, drop). A seq is taken only by a transaction that
// holds the writer's one connection, so seqs are taken in the order the
// transactions commit, as the counter's row lock ensured; a post that
// fails or is rolled back leaves a gap, which nothing minds (a stream
// resumes after a seq, it does not count). A post that finds no seq left
// (a transaction of Tx, or a reservation that failed) increments the
// counter row by one in its own transaction, as every post did before,
// and empties the block, so that no smaller seq is given after it. A new
// process starts above the counter, leaving the rest of the previous
// one's blocks unused. Every reservation starts above both the counter and
// the highest seq this process gave, so seqs never go back, even when an
// agent is deleted and made again under the same ID.

// seqBlockSize is how many seqs of an agent one reservation takes.
const seqBlockSize = 1024

// seqBlocks holds, per agent, the seqs reserved and not given yet.
type seqBlocks struct {
	mu     sync.Mutex
	blocks map[string]*seqBlock
}

// seqBlock is the reserved seqs next to last; it is empty when next >
// last, and last is then the highest seq given.
type seqBlock struct {
	next, last int64
}

// reserveSeqsQuery sets agent $1's counter to size $3 past the larger of
// itself and $2, the highest seq this process reserved for the agent, and
// returns it.
const reserveSeqsQuery = `INSERT INTO message_seqs (agent_id, seq) VALUES ($1, $2 + $3)
	ON CONFLICT (agent_id) DO UPDATE SET seq = CASE WHEN message_seqs.seq > $2 THEN message_seqs.seq ELSE $2 END + $3
	RETURNING seq`

// take gives the next seq reserved for the agent, if any is left.
func (b *seqBlocks) take(agentID string) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.blocks[agentID]
	if k == nil || k.next > k.last {
		return 0, false
	}
	k.next++
	return k.next - 1, true
}

// last returns the highest seq reserved for the agent, 0 if none, and
// whether fewer than n are left to give.
func (b *seqBlocks) last(agentID string, n int) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.blocks[agentID]
	if k == nil {
		return 0, true
	}
	return k.last, k.last-k.next+1 < int64(n)
}

// set records that the seqs of the agent from first to last are reserved
// and none given yet, unless a seq of first or above was reserved or given
// meanwhile (a post of Tx that took the counter's between a leader's
// reservation and its set): then the reservation is dropped, since seqs
// must not go back.
func (b *seqBlocks) set(agentID string, first, last int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.blocks == nil {
		b.blocks = map[string]*seqBlock{}
	}
	if k := b.blocks[agentID]; k != nil && k.last >= first {
		return
	}
	b.blocks[agentID] = &seqBlock{next: first, last: last}
}

// drop empties every block, keeping the highest seq reserved: after a
// transaction that reserved seqs was rolled back, its reservations are
// gone from the counter, but seqs of them may have been handed out
// (PostHanded), so the next reservation must still start above them.
func (b *seqBlocks) drop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.blocks {
		k.next = k.last + 1
	}
}

// reserve takes size seqs of the agent on the counter row, past the
// highest this process reserved, and returns the last of them. Outside a
// transaction the reservation is committed at once.
func (s *Store) reserve(ctx context.Context, agentID string, size int) (int64, error) {
	prev, _ := s.seqs.last(agentID, 0)
	var last int64
	err := s.write.QueryRowContext(detach(ctx), reserveSeqsQuery, agentID, prev, size).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("reserve seqs of agent %s: %w", agentID, err)
	}
	return last, nil
}

// reserveSeqs makes sure, before a batch begins, that the block of each
// agent of ops has a seq for every post of the agent in it. A reservation
// that fails is left alone: the posts then take the counter's.
func (s *Store) reserveSeqs(ctx context.Context, ops []*groupOp) {
	need := map[string]int{}
	for _, op := range ops {
		if op.agentID != "" {
			need[op.agentID]++
		}
	}
	for agentID, n := range need {
		if _, short := s.seqs.last(agentID, n); !short {
			continue
		}
		size := max(seqBlockSize, n)
		if last, err := s.reserve(ctx, agentID, size); err == nil {
			s.seqs.set(agentID, last-int64(size)+1, last)
		}
	}
}

// takeSeq gives m the next seq of its agent: from the agent's block when
// the Store keeps blocks and one is left, else from the agent's counter
// row, locked until the transaction ends. s must be a transaction.
func (s *Store) takeSeq(ctx context.Context, m *mcpgate.Message) error {
	if s.seqs == nil {
		return s.nextSeq(ctx, m)
	}
	if seq, ok := s.seqs.take(m.AgentID); ok {
		m.Seq = seq
		return nil
	}
	last, err := s.reserve(ctx, m.AgentID, 1)
	if err != nil {
		return fmt.Errorf("post message: %w", err)
	}
	m.Seq = last
	s.seqs.set(m.AgentID, last+1, last)
	return nil
}
