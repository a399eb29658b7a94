-- 0001: tenants, users, threads, messages (with full-text index), summaries,
-- events and titles. Timestamps are INTEGER nanoseconds since the Unix
-- epoch, UTC. Every per-user table references users with ON DELETE CASCADE,
-- so deleting a user row removes all of the user's data.

CREATE TABLE tenants (
    id         TEXT    NOT NULL PRIMARY KEY,
    created_at INTEGER NOT NULL
) STRICT;

INSERT INTO tenants (id, created_at)
VALUES ('default', CAST(unixepoch('subsec') * 1000000000 AS INTEGER));

CREATE TABLE users (
    tenant_id  TEXT    NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id         TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
) STRICT, WITHOUT ROWID;

-- A thread keeps its state between turns: the active context (JSON of
-- memento.ActiveContext), the ids of the titles the last answer showed (JSON
-- array) and the sequence number of its newest message.
CREATE TABLE threads (
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL DEFAULT 0,
    context    TEXT    NOT NULL DEFAULT '{}',
    last_shown TEXT    NOT NULL DEFAULT '[]',
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT;

CREATE INDEX threads_by_update ON threads (tenant_id, user_id, updated_at DESC);

-- pk is the rowid the full-text index refers to; id is the client's (or a
-- generated) id, unique per user, which makes appends idempotent.
CREATE TABLE messages (
    pk         INTEGER NOT NULL PRIMARY KEY,
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    thread_id  TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    text       TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (tenant_id, user_id, id),
    UNIQUE (tenant_id, user_id, thread_id, seq),
    FOREIGN KEY (tenant_id, user_id, thread_id) REFERENCES threads (tenant_id, user_id, id) ON DELETE CASCADE
) STRICT;

-- External-content FTS5 index over message text, kept in sync by triggers
-- (which also fire for rows removed by a cascading delete).
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text,
    content = 'messages',
    content_rowid = 'pk',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.pk, new.text);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.pk, old.text);
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.pk, old.text);
    INSERT INTO messages_fts (rowid, text) VALUES (new.pk, new.text);
END;

CREATE TABLE summaries (
    id         INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    thread_id  TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    from_seq   INTEGER NOT NULL,
    to_seq     INTEGER NOT NULL,
    sources    TEXT    NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, user_id, thread_id) REFERENCES threads (tenant_id, user_id, id) ON DELETE CASCADE
) STRICT;

CREATE INDEX summaries_by_thread ON summaries (tenant_id, user_id, thread_id, id);

CREATE TABLE events (
    pk         INTEGER NOT NULL PRIMARY KEY,
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    title_id   TEXT    NOT NULL,
    value      REAL,
    at         INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT;

CREATE INDEX events_by_time ON events (tenant_id, user_id, at, pk);

-- Titles are shared by every tenant: the catalog is not per-user data.
-- genres and cast_members are JSON arrays of strings.
CREATE TABLE titles (
    id              TEXT    NOT NULL PRIMARY KEY,
    title           TEXT    NOT NULL,
    type            TEXT    NOT NULL DEFAULT '',
    year            INTEGER NOT NULL DEFAULT 0,
    end_year        INTEGER NOT NULL DEFAULT 0,
    genres          TEXT    NOT NULL DEFAULT '[]',
    cast_members    TEXT    NOT NULL DEFAULT '[]',
    overview        TEXT    NOT NULL DEFAULT '',
    runtime_minutes INTEGER NOT NULL DEFAULT 0,
    is_adult        INTEGER NOT NULL DEFAULT 0,
    href            TEXT    NOT NULL DEFAULT ''
) STRICT;
