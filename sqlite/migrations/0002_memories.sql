-- 0002: attribute memory. Memories (semantic values and episodes) with a
-- full-text index and embeddings, message embeddings for recall, per-user
-- mode overrides, the records of pipeline runs and the durable checkpoints
-- of graph runs. Every table cascades from users (or messages), so
-- forgetting a user forgets all of it.

-- A memory is a semantic attribute value (one current per user and
-- attribute: valid_to IS NULL) or an episode. sources is a JSON array of
-- message ids. Embeddings live in memory_vectors, so that the rows recall
-- scans stay small.
CREATE TABLE memories (
    pk         INTEGER NOT NULL PRIMARY KEY,
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('attribute', 'episode')),
    attribute  TEXT    NOT NULL,
    mode       TEXT    NOT NULL CHECK (mode IN ('semantic', 'episodic')),
    value      TEXT    NOT NULL,
    valid_from INTEGER NOT NULL,
    valid_to   INTEGER,
    sources    TEXT    NOT NULL DEFAULT '[]',
    thread_id  TEXT    NOT NULL DEFAULT '',
    run_id     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT;

-- At most one current semantic value per user and attribute.
CREATE UNIQUE INDEX memories_one_current ON memories (tenant_id, user_id, attribute)
    WHERE valid_to IS NULL AND mode = 'semantic';
CREATE INDEX memories_by_attribute ON memories (tenant_id, user_id, attribute, valid_from);
CREATE INDEX memories_current_by_time ON memories (tenant_id, user_id, valid_from)
    WHERE valid_to IS NULL;

-- Recall's keyword indexes are contentless FTS5 tables (rowid = pk of the
-- indexed row) with a scope column holding one token per user ('u', the
-- hex of tenant, 0x1f and user, then '0'), so a query matches only its
-- user's rows and FTS5 ranks and limits them without reading any row.
-- memories_fts indexes current memories only: a superseded value leaves
-- it when its valid_to is set.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    value,
    attribute,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories WHEN new.valid_to IS NULL BEGIN
    INSERT INTO memories_fts (rowid, value, attribute, scope)
    VALUES (new.pk, new.value, new.attribute, 'u' || hex(new.tenant_id || char(31) || new.user_id) || '0');
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.pk;
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF value, attribute, valid_to ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.pk;
    INSERT INTO memories_fts (rowid, value, attribute, scope)
    SELECT new.pk, new.value, new.attribute, 'u' || hex(new.tenant_id || char(31) || new.user_id) || '0'
    WHERE new.valid_to IS NULL;
END;

-- message_search indexes the messages for recall in the same way; a
-- message the pipeline rejects as an instruction to the system leaves it.
CREATE VIRTUAL TABLE message_search USING fts5 (
    text,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

INSERT INTO message_search (rowid, text, scope)
SELECT pk, text, 'u' || hex(tenant_id || char(31) || user_id) || '0' FROM messages;

CREATE TRIGGER message_search_insert AFTER INSERT ON messages BEGIN
    INSERT INTO message_search (rowid, text, scope)
    VALUES (new.pk, new.text, 'u' || hex(new.tenant_id || char(31) || new.user_id) || '0');
END;

CREATE TRIGGER message_search_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_search WHERE rowid = old.pk;
END;

CREATE TRIGGER message_search_update AFTER UPDATE OF text ON messages BEGIN
    DELETE FROM message_search WHERE rowid = old.pk;
    INSERT INTO message_search (rowid, text, scope)
    VALUES (new.pk, new.text, 'u' || hex(new.tenant_id || char(31) || new.user_id) || '0');
END;

-- Embeddings of memories and of messages, for the vector part of recall:
-- little-endian float32, by the embedder named in embedder.
CREATE TABLE memory_vectors (
    memory_pk INTEGER NOT NULL PRIMARY KEY REFERENCES memories (pk) ON DELETE CASCADE,
    embedder  TEXT    NOT NULL,
    embedding BLOB    NOT NULL
) STRICT;

CREATE TABLE message_vectors (
    message_pk INTEGER NOT NULL PRIMARY KEY REFERENCES messages (pk) ON DELETE CASCADE,
    embedder   TEXT    NOT NULL,
    embedding  BLOB    NOT NULL
) STRICT;

-- Recall and the pipeline's catch-up read a user's messages in time order.
CREATE INDEX messages_by_user_time ON messages (tenant_id, user_id, at, pk);

-- Per-user overrides of attribute modes, for experiments; attribute '*'
-- applies to every attribute without an override of its own.
CREATE TABLE memory_modes (
    tenant_id TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    attribute TEXT NOT NULL,
    mode      TEXT NOT NULL CHECK (mode IN ('semantic', 'episodic')),
    PRIMARY KEY (tenant_id, user_id, attribute),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- The record of each pipeline run (one per message): outcome and trace as
-- JSON (memento.MemoryRun). Its presence means the message was processed.
CREATE TABLE memory_runs (
    tenant_id   TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    message_id  TEXT    NOT NULL,
    thread_id   TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,
    report      TEXT    NOT NULL,
    finished_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, message_id),
    FOREIGN KEY (tenant_id, user_id, message_id) REFERENCES messages (tenant_id, user_id, id) ON DELETE CASCADE
) STRICT;

CREATE INDEX memory_runs_by_time ON memory_runs (tenant_id, user_id, finished_at);

CREATE TRIGGER memory_runs_rejected AFTER INSERT ON memory_runs WHEN new.outcome = 'rejected' BEGIN
    DELETE FROM message_search WHERE rowid =
        (SELECT pk FROM messages WHERE tenant_id = new.tenant_id AND user_id = new.user_id AND id = new.message_id);
END;

-- Durable checkpoints of graph runs (graph.Checkpoint), keyed per user by
-- the graph's key (graph name, a slash, run id).
CREATE TABLE graph_checkpoints (
    tenant_id TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    key       TEXT    NOT NULL,
    graph     TEXT    NOT NULL,
    next      TEXT    NOT NULL,
    state     TEXT    NOT NULL,
    trace     TEXT    NOT NULL,
    done      INTEGER NOT NULL,
    saved_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, key),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT;
