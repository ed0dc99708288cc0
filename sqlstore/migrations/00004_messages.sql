-- +goose Up
-- Channels and messages of the message service, the delivery state of
-- messages to agent workers, and which agent workers are connected.
-- Times are Unix microseconds (BIGINT); identifiers use the "C" collation.

CREATE TABLE channels (
    id         TEXT COLLATE "C" PRIMARY KEY,
    agent_id   TEXT COLLATE "C" NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    skill      TEXT COLLATE "C" NOT NULL,
    owner      TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C",
    created_at BIGINT NOT NULL
);
CREATE INDEX channels_agent_id ON channels (agent_id);

-- message_seqs holds the last seq given to a message of each agent. A post
-- increments it in its own transaction, whose row lock makes posts for one
-- agent commit in the order of their seqs.
CREATE TABLE message_seqs (
    agent_id TEXT COLLATE "C" PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
    seq      BIGINT NOT NULL
);

-- delivered_at, attempts and acked_at are the delivery state of messages to
-- the agent's workers (chat_message and cancel).
CREATE TABLE messages (
    id           TEXT COLLATE "C" PRIMARY KEY,
    agent_id     TEXT COLLATE "C" NOT NULL,
    seq          BIGINT NOT NULL,
    channel_id   TEXT COLLATE "C" NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    skill        TEXT COLLATE "C" NOT NULL,
    type         TEXT NOT NULL,
    in_reply_to  TEXT COLLATE "C",
    sender       TEXT NOT NULL,
    body         TEXT NOT NULL,
    tool         TEXT,
    arguments    TEXT,
    created_at   BIGINT NOT NULL,
    delivered_at BIGINT,
    attempts     BIGINT NOT NULL DEFAULT 0,
    acked_at     BIGINT,
    UNIQUE (agent_id, seq)
);
CREATE INDEX messages_channel_seq ON messages (channel_id, seq);
CREATE INDEX messages_in_reply_to ON messages (in_reply_to) WHERE in_reply_to IS NOT NULL;
-- One final reply per message.
CREATE UNIQUE INDEX messages_final_reply ON messages (in_reply_to)
    WHERE type IN ('agent_reply', 'agent_error');
-- The agent's inbox: messages to its workers not acknowledged yet.
CREATE INDEX messages_inbox ON messages (agent_id, seq)
    WHERE acked_at IS NULL AND type IN ('chat_message', 'cancel');

-- agent_presence says until when a replica has workers of an agent's skill
-- ('' for all of its skills) connected; replicas refresh their rows while
-- the workers stay.
CREATE TABLE agent_presence (
    agent_id   TEXT COLLATE "C" NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    skill      TEXT COLLATE "C" NOT NULL,
    replica    TEXT COLLATE "C" NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, skill, replica)
);

-- +goose Down
DROP TABLE agent_presence;
DROP TABLE messages;
DROP TABLE message_seqs;
DROP TABLE channels;
