-- 0002: profiles learned from events and the co-occurrence models learned
-- over every user's events (SQLite 0003), and preference memory (SQLite
-- 0004): signed, decaying concepts with their embeddings, the sources
-- already applied, a per-user version driving the debounced clustering
-- job, and the clusters with each member's stance. Every table cascades
-- from users (models from tenants).

CREATE TABLE profiles (
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    version    BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX profiles_by_update ON profiles (updated_at);

-- value is the key's JSON as given (compacted); evidence a JSON array of
-- event ids. A key with source 'user' is never written by a learner.
CREATE TABLE profile_keys (
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    key        TEXT   NOT NULL,
    value      TEXT   NOT NULL,
    source     TEXT   NOT NULL CHECK (source IN ('learned', 'user')),
    evidence   JSONB  NOT NULL DEFAULT '[]',
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, key),
    FOREIGN KEY (tenant_id, user_id) REFERENCES profiles (tenant_id, user_id) ON DELETE CASCADE
);

CREATE TABLE profile_models (
    tenant_id   TEXT   NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name        TEXT   NOT NULL,
    version     BIGINT NOT NULL,
    events_mark BIGINT NOT NULL,
    data        BYTEA  NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE INDEX events_by_tenant ON events (tenant_id, pk);

CREATE TABLE preferences (
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    concept    TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('taste', 'fact')),
    weight     DOUBLE PRECISION NOT NULL,
    evidence   INTEGER NOT NULL,
    sources    JSONB   NOT NULL DEFAULT '[]',
    embedder   TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    vector     BYTEA   NOT NULL,
    first_seen BIGINT  NOT NULL,
    last_seen  BIGINT  NOT NULL,
    created_at BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX preferences_by_embedder ON preferences (tenant_id, user_id, embedder);

CREATE TABLE preference_sources (
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    source_id  TEXT   NOT NULL,
    applied_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, source_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE preference_state (
    tenant_id            TEXT   NOT NULL,
    user_id              TEXT   NOT NULL,
    version              BIGINT NOT NULL DEFAULT 0,
    clustered_version    BIGINT NOT NULL DEFAULT 0,
    cluster_requested_at BIGINT,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE preference_clusters (
    tenant_id   TEXT   NOT NULL,
    user_id     TEXT   NOT NULL,
    id          TEXT   NOT NULL,
    description TEXT   NOT NULL,
    signature   TEXT   NOT NULL DEFAULT '',
    version     BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE preference_cluster_members (
    tenant_id     TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    cluster_id    TEXT    NOT NULL,
    preference_id TEXT    NOT NULL,
    stance        TEXT    NOT NULL CHECK (stance IN ('support', 'oppose')),
    position      INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, cluster_id, preference_id),
    FOREIGN KEY (tenant_id, user_id, cluster_id) REFERENCES preference_clusters (tenant_id, user_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, user_id, preference_id) REFERENCES preferences (tenant_id, user_id, id) ON DELETE CASCADE
);

CREATE INDEX preference_cluster_members_by_preference ON preference_cluster_members (tenant_id, user_id, preference_id);

-- Catalog titles, shared by every tenant (SQLite 0001 and 0008).
-- genres and cast_members are JSON arrays of strings.
CREATE TABLE titles (
    id              TEXT    NOT NULL PRIMARY KEY,
    title           TEXT    NOT NULL,
    type            TEXT    NOT NULL DEFAULT '',
    year            INTEGER NOT NULL DEFAULT 0,
    end_year        INTEGER NOT NULL DEFAULT 0,
    genres          JSONB   NOT NULL DEFAULT '[]',
    cast_members    JSONB   NOT NULL DEFAULT '[]',
    overview        TEXT    NOT NULL DEFAULT '',
    runtime_minutes INTEGER NOT NULL DEFAULT 0,
    is_adult        BOOLEAN NOT NULL DEFAULT FALSE,
    href            TEXT    NOT NULL DEFAULT '',
    notability      DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (notability >= 0 AND notability <= 1)
);

-- How far the write-behind of a snapshot target has looked for changed
-- users (SQLite 0003), and the indexes its scan of changes reads.
CREATE TABLE snapshot_cursors (
    target TEXT   NOT NULL PRIMARY KEY,
    at     BIGINT NOT NULL
);

CREATE INDEX events_by_created ON events (created_at);
CREATE INDEX summaries_by_created ON summaries (created_at);
CREATE INDEX threads_by_updated ON threads (updated_at);

-- The processes that run the job queue on this database (as SQLite's
-- 0006): each started queue has a row named by its River client id, which
-- River appends to river_job.attempted_by when it takes a job, and renews
-- heartbeat_at every fifth of its lease. A running job whose process has
-- not renewed its lease (or has no row) was lost with that process, and
-- any other queue makes it available again (lease.go). Times come from the
-- database's clock, so the processes' clocks need not agree.
CREATE TABLE queue_processes (
    id           TEXT        NOT NULL PRIMARY KEY,
    pid          INTEGER     NOT NULL,
    host         TEXT        NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_ms     BIGINT      NOT NULL CHECK (lease_ms > 0)
);
