-- 0010: API keys. Only the SHA-256 of a key is kept (memento.HashAPIKey);
-- the key itself is shown once, when it is created. A revoked key keeps
-- its row (revoked_at set), so lists show it and the server never falls
-- back to open mode once a key existed.
CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    tenant_id  TEXT NOT NULL,
    user_id    TEXT NOT NULL DEFAULT '',
    role       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);
