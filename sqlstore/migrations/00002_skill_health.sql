-- +goose Up
-- The health of each mcp skill's upstream connection, written by the
-- upstream manager on state changes. Times are Unix microseconds.
CREATE TABLE skill_health (
    agent_id      TEXT COLLATE "C" NOT NULL,
    skill_name    TEXT COLLATE "C" NOT NULL,
    state         TEXT NOT NULL,
    tools         BIGINT NOT NULL,
    last_error    TEXT NOT NULL,
    last_error_at BIGINT,
    last_call_at  BIGINT,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (agent_id, skill_name),
    FOREIGN KEY (agent_id, skill_name) REFERENCES skills (agent_id, name) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE skill_health;
