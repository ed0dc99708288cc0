-- +goose Up
-- The OAuth 2.1 authorization server: registered clients, users' grants,
-- token families, authorization codes, refresh tokens and the keys that sign
-- access tokens. Codes, refresh tokens and client secrets are kept as hex
-- SHA-256 hashes; lists (redirect URIs, agents) are JSON arrays. Times are
-- Unix microseconds.

CREATE TABLE oauth_clients (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    auth_method   TEXT NOT NULL,
    secret_hash   TEXT NOT NULL,
    client_uri    TEXT NOT NULL,
    logo_uri      TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);

-- client_id is not a foreign key: clients known by a Client ID Metadata
-- Document are not stored.
CREATE TABLE oauth_grants (
    id         TEXT COLLATE "C" PRIMARY KEY,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  TEXT COLLATE "C" NOT NULL,
    agents     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (user_id, client_id)
);

-- A family outlives its grant, revoked, so that its tokens stay refused.
CREATE TABLE oauth_families (
    id         TEXT COLLATE "C" PRIMARY KEY,
    grant_id   TEXT COLLATE "C" NOT NULL,
    client_id  TEXT COLLATE "C" NOT NULL,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX oauth_families_grant_id ON oauth_families (grant_id);

CREATE TABLE oauth_codes (
    hash         TEXT COLLATE "C" PRIMARY KEY,
    family_id    TEXT COLLATE "C" NOT NULL REFERENCES oauth_families (id) ON DELETE CASCADE,
    client_id    TEXT COLLATE "C" NOT NULL,
    user_id      TEXT COLLATE "C" NOT NULL,
    redirect_uri TEXT NOT NULL,
    challenge    TEXT NOT NULL,
    resource     TEXT NOT NULL,
    scope        TEXT NOT NULL,
    agents       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    used_at      BIGINT
);
CREATE INDEX oauth_codes_expires_at ON oauth_codes (expires_at);

CREATE TABLE oauth_refresh_tokens (
    hash       TEXT COLLATE "C" PRIMARY KEY,
    family_id  TEXT COLLATE "C" NOT NULL REFERENCES oauth_families (id) ON DELETE CASCADE,
    client_id  TEXT COLLATE "C" NOT NULL,
    user_id    TEXT COLLATE "C" NOT NULL,
    resource   TEXT NOT NULL,
    scope      TEXT NOT NULL,
    agents     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX oauth_refresh_tokens_expires_at ON oauth_refresh_tokens (expires_at);

-- secret is hex. It is not encrypted: the gateway has no master key yet.
CREATE TABLE oauth_signing_keys (
    id         TEXT COLLATE "C" PRIMARY KEY,
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE oauth_signing_keys;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_families;
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
