-- 0003: profiles learned from events, the co-occurrence models learned
-- from every user's events, and the write-behind cursors of snapshot
-- targets. Timestamps are INTEGER nanoseconds since the Unix epoch, UTC.

-- One row per user with a profile: the version grows with every change of
-- its keys, so PUT and PATCH can check If-Match.
CREATE TABLE profiles (
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX profiles_by_update ON profiles (updated_at);

-- The keys of a profile. value is JSON; evidence is a JSON array of event
-- ids. A key with source 'user' is never written by a learner.
CREATE TABLE profile_keys (
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    source     TEXT    NOT NULL CHECK (source IN ('learned', 'user')),
    evidence   TEXT    NOT NULL DEFAULT '[]',
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, key),
    FOREIGN KEY (tenant_id, user_id) REFERENCES profiles (tenant_id, user_id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- Models learned over every user's events of a tenant, such as the title
-- co-occurrence model. events_mark is the largest events.pk the model saw,
-- so a recompute that would see nothing new is skipped.
CREATE TABLE profile_models (
    tenant_id   TEXT    NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    events_mark INTEGER NOT NULL,
    data        BLOB    NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, name)
) STRICT;

-- How far the write-behind of a snapshot target has looked for changed
-- users: every change after "at" may not be in the snapshot yet.
CREATE TABLE snapshot_cursors (
    target TEXT    NOT NULL PRIMARY KEY,
    at     INTEGER NOT NULL
) STRICT;

-- Changed-user lookups of the write-behind scan these by time.
CREATE INDEX events_by_created ON events (created_at);
CREATE INDEX summaries_by_created ON summaries (created_at);
CREATE INDEX threads_by_updated ON threads (updated_at);
