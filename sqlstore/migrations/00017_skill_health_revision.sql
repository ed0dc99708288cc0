-- +goose Up
-- The protocol revision the gateway negotiated with a skill's upstream
-- (2026-07-28, 2025-11-25, ...); empty until it has connected once.
ALTER TABLE skill_health ADD COLUMN protocol_version TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE skill_health DROP COLUMN protocol_version;
