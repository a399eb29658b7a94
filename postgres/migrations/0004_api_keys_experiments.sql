-- 0004: API keys and between-subjects studies, as in the SQLite store
-- (migrations 0010 and 0011 there).
--
-- Only the SHA-256 of a key is kept (memento.HashAPIKey); the key itself is
-- shown once, when it is created. A revoked key keeps its row (revoked_at
-- set), so lists show it and the server never falls back to open mode once
-- a key existed.
CREATE TABLE api_keys (
    id         TEXT   NOT NULL PRIMARY KEY,
    hash       TEXT   NOT NULL UNIQUE,
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL DEFAULT '',
    role       TEXT   NOT NULL CHECK (role IN ('admin', 'write', 'read')),
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at);

-- A study names its arms (each a memory mode) and keeps its questionnaire
-- instrument as JSON, so a study's data stay readable if the shipped file
-- changes. A participant's row holds the arm drawn at enrolment, the
-- Memento user the conversation runs as, the stage reached, and the
-- answers. Rows do not reference users: forgetting a user leaves the
-- study's responses, which hold no conversation text. Enrolments lock the
-- study's row, so the arm counts each one sees are exact however many
-- processes enrol at once.
CREATE TABLE experiments (
    name       TEXT   NOT NULL PRIMARY KEY,
    arms       JSONB  NOT NULL,
    instrument JSONB  NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE experiment_participants (
    experiment   TEXT   NOT NULL REFERENCES experiments (name) ON DELETE CASCADE,
    id           TEXT   NOT NULL,
    seq          BIGINT NOT NULL,
    arm          TEXT   NOT NULL,
    mode         TEXT   NOT NULL,
    tenant_id    TEXT   NOT NULL,
    user_id      TEXT   NOT NULL,
    thread_id    TEXT   NOT NULL,
    stage        TEXT   NOT NULL CHECK (stage IN ('demographics', 'conversation', 'done')),
    demographics JSONB,
    answers      JSONB,
    consented_at BIGINT NOT NULL,
    completed_at BIGINT,
    PRIMARY KEY (experiment, id),
    UNIQUE (experiment, seq)
);

CREATE INDEX experiment_participants_by_arm ON experiment_participants (experiment, arm);
