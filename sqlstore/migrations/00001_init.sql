-- +goose Up
-- Times are Unix microseconds (BIGINT). Identifiers and names use the "C"
-- collation so that they sort bytewise, as in SQLite.

CREATE TABLE meta (
    name  TEXT COLLATE "C" PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO meta (name, value) VALUES ('generation', 0);

CREATE TABLE users (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT COLLATE "C" NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    admin         BOOLEAN NOT NULL,
    source        TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

-- Deleting a user who still owns agents is refused (no cascade).
CREATE TABLE agents (
    id          TEXT COLLATE "C" PRIMARY KEY,
    name        TEXT COLLATE "C" NOT NULL,
    description TEXT NOT NULL,
    owner_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    mcp_enabled BOOLEAN NOT NULL,
    source      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX agents_owner_id ON agents (owner_id);

CREATE TABLE skills (
    agent_id   TEXT COLLATE "C" NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    name       TEXT COLLATE "C" NOT NULL,
    kind       TEXT NOT NULL,
    position   BIGINT NOT NULL,
    spec       TEXT NOT NULL,
    source     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, name)
);
CREATE INDEX skills_agent_position ON skills (agent_id, position);

CREATE TABLE tools (
    agent_id   TEXT COLLATE "C" NOT NULL,
    skill_name TEXT COLLATE "C" NOT NULL,
    position   BIGINT NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    spec       TEXT NOT NULL,
    PRIMARY KEY (agent_id, skill_name, position),
    UNIQUE (agent_id, skill_name, name),
    FOREIGN KEY (agent_id, skill_name) REFERENCES skills (agent_id, name) ON DELETE CASCADE
);

CREATE TABLE api_keys (
    id           TEXT COLLATE "C" PRIMARY KEY,
    kind         TEXT NOT NULL,
    user_id      TEXT COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    agent_id     TEXT COLLATE "C" REFERENCES agents (id) ON DELETE CASCADE,
    name         TEXT COLLATE "C" NOT NULL,
    hash         TEXT COLLATE "C" NOT NULL UNIQUE,
    hint         TEXT NOT NULL,
    source       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX api_keys_user_id ON api_keys (user_id, created_at);
CREATE INDEX api_keys_agent_id ON api_keys (agent_id, created_at);

CREATE TABLE sessions (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    agent_id            TEXT COLLATE "C" NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    identity            TEXT NOT NULL,
    protocol_version    TEXT NOT NULL,
    client_name         TEXT NOT NULL,
    client_version      TEXT NOT NULL,
    client_capabilities TEXT,
    log_level           TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    last_seen_at        BIGINT NOT NULL,
    ended_at            BIGINT
);
CREATE INDEX sessions_agent_id ON sessions (agent_id);
CREATE INDEX sessions_last_seen_at ON sessions (last_seen_at);
CREATE INDEX sessions_ended_at ON sessions (ended_at) WHERE ended_at IS NOT NULL;

-- +goose Down
DROP TABLE sessions;
DROP TABLE api_keys;
DROP TABLE tools;
DROP TABLE skills;
DROP TABLE agents;
DROP TABLE users;
DROP TABLE meta;
