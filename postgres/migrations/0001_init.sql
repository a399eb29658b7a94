-- 0001: the whole store, mirroring the SQLite store's tables (migrations
-- 0001-0009 there). Timestamps of Memento's own tables are BIGINT
-- nanoseconds since the Unix epoch, UTC, as in SQLite, so times survive a
-- round trip to the nanosecond and both stores compare them alike.
-- Every per-user table references its user (directly or through threads,
-- messages or memories) with ON DELETE CASCADE, so deleting the user row
-- deletes everything the user owns, their keyword index and change-log
-- triggers included. River's tables (river_job, ...) are created by
-- River's own migrations, after these.

CREATE TABLE tenants (
    id         TEXT   NOT NULL PRIMARY KEY,
    created_at BIGINT NOT NULL
);

INSERT INTO tenants (id, created_at)
VALUES ('default', (extract(epoch FROM clock_timestamp()) * 1000000000)::BIGINT);

CREATE TABLE users (
    tenant_id  TEXT   NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    id         TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

-- A thread keeps its state between turns: the active context (JSON of
-- memento.ActiveContext), the titles the last answer showed, every title
-- shown (newest first) and the sequence number of its newest message.
CREATE TABLE threads (
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    id         TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    last_seq   BIGINT NOT NULL DEFAULT 0,
    context    JSONB  NOT NULL DEFAULT '{}',
    last_shown JSONB  NOT NULL DEFAULT '[]',
    shown      JSONB  NOT NULL DEFAULT '[]',
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX threads_by_update ON threads (tenant_id, user_id, updated_at DESC);

-- pk is the row key recall's change log and keyword index refer to; id
-- is the client's (or a generated) id, unique per user, which makes
-- appends idempotent.
CREATE TABLE messages (
    pk         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    thread_id  TEXT   NOT NULL,
    id         TEXT   NOT NULL,
    seq        BIGINT NOT NULL,
    role       TEXT   NOT NULL CHECK (role IN ('user', 'assistant')),
    text       TEXT   NOT NULL,
    at         BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (tenant_id, user_id, id),
    UNIQUE (tenant_id, user_id, thread_id, seq),
    FOREIGN KEY (tenant_id, user_id, thread_id) REFERENCES threads (tenant_id, user_id, id) ON DELETE CASCADE
);

CREATE INDEX messages_by_user_time ON messages (tenant_id, user_id, at, pk);

-- The answer of each agent turn, kept with the turn's assistant message.
CREATE TABLE turn_answers (
    message_pk BIGINT NOT NULL PRIMARY KEY REFERENCES messages (pk) ON DELETE CASCADE,
    answer     JSONB  NOT NULL
);

CREATE TABLE summaries (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    thread_id  TEXT   NOT NULL,
    text       TEXT   NOT NULL,
    from_seq   BIGINT NOT NULL,
    to_seq     BIGINT NOT NULL,
    sources    JSONB  NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    FOREIGN KEY (tenant_id, user_id, thread_id) REFERENCES threads (tenant_id, user_id, id) ON DELETE CASCADE
);

CREATE INDEX summaries_by_thread ON summaries (tenant_id, user_id, thread_id, id);

CREATE TABLE events (
    pk         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    id         TEXT   NOT NULL,
    type       TEXT   NOT NULL,
    title_id   TEXT   NOT NULL,
    value      DOUBLE PRECISION,
    at         BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX events_by_time ON events (tenant_id, user_id, at, pk);

-- A memory is a semantic attribute value (one current per user and
-- attribute: valid_to IS NULL) or an episode. sources is a JSON array of
-- message ids.
CREATE TABLE memories (
    pk         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    id         TEXT   NOT NULL,
    kind       TEXT   NOT NULL CHECK (kind IN ('attribute', 'episode')),
    attribute  TEXT   NOT NULL,
    mode       TEXT   NOT NULL CHECK (mode IN ('semantic', 'episodic')),
    value      TEXT   NOT NULL,
    valid_from BIGINT NOT NULL,
    valid_to   BIGINT,
    sources    JSONB  NOT NULL DEFAULT '[]',
    thread_id  TEXT   NOT NULL DEFAULT '',
    run_id     TEXT   NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

CREATE UNIQUE INDEX memories_one_current ON memories (tenant_id, user_id, attribute)
    WHERE valid_to IS NULL AND mode = 'semantic';
CREATE INDEX memories_by_attribute ON memories (tenant_id, user_id, attribute, valid_from);
CREATE INDEX memories_current_by_time ON memories (tenant_id, user_id, valid_from) WHERE valid_to IS NULL;

-- Embeddings of memories and messages: little-endian float32 values by
-- the embedder named in embedder. Similarity is computed in Go over a
-- bounded per-user candidate set (pgvector is not assumed).
CREATE TABLE memory_vectors (
    memory_pk BIGINT NOT NULL PRIMARY KEY REFERENCES memories (pk) ON DELETE CASCADE,
    embedder  TEXT   NOT NULL,
    embedding BYTEA  NOT NULL
);

CREATE TABLE message_vectors (
    message_pk BIGINT NOT NULL PRIMARY KEY REFERENCES messages (pk) ON DELETE CASCADE,
    embedder   TEXT   NOT NULL,
    embedding  BYTEA  NOT NULL
);

CREATE TABLE memory_modes (
    tenant_id TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    attribute TEXT NOT NULL,
    mode      TEXT NOT NULL CHECK (mode IN ('semantic', 'episodic')),
    PRIMARY KEY (tenant_id, user_id, attribute),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

-- The record of each pipeline run (one per message).
CREATE TABLE memory_runs (
    tenant_id   TEXT   NOT NULL,
    user_id     TEXT   NOT NULL,
    message_id  TEXT   NOT NULL,
    thread_id   TEXT   NOT NULL,
    outcome     TEXT   NOT NULL,
    report      JSONB  NOT NULL,
    finished_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, message_id),
    FOREIGN KEY (tenant_id, user_id, message_id) REFERENCES messages (tenant_id, user_id, id) ON DELETE CASCADE
);

CREATE INDEX memory_runs_by_time ON memory_runs (tenant_id, user_id, finished_at);

-- Keyword search. The terms of a document are those package fulltext
-- makes of it (the tokenizer and Porter stemmer that SQLite's FTS5 tables
-- are configured with), written by the store in Go; BM25 is computed from
-- them as FTS5's bm25() does (see search.go). *_search holds a document's
-- length in tokens (every column, plus the one scope token an FTS5 row of
-- the SQLite store carries), *_terms its weighted term frequencies with
-- the length again, so that ranking a user's matches reads one index and
-- nothing else. Only current memories and messages not rejected by the
-- pipeline are indexed.
CREATE TABLE memory_search (
    pk        BIGINT NOT NULL PRIMARY KEY REFERENCES memories (pk) ON DELETE CASCADE,
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    len       INTEGER NOT NULL
);

CREATE TABLE memory_terms (
    pk        BIGINT NOT NULL REFERENCES memory_search (pk) ON DELETE CASCADE,
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    term      TEXT   NOT NULL,
    freq      DOUBLE PRECISION NOT NULL,
    len       INTEGER NOT NULL,
    PRIMARY KEY (pk, term)
);

CREATE INDEX memory_terms_by_user ON memory_terms (tenant_id, user_id, term) INCLUDE (pk, freq, len);

CREATE TABLE message_search (
    pk        BIGINT NOT NULL PRIMARY KEY REFERENCES messages (pk) ON DELETE CASCADE,
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    len       INTEGER NOT NULL
);

CREATE TABLE message_terms (
    pk        BIGINT NOT NULL REFERENCES message_search (pk) ON DELETE CASCADE,
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    term      TEXT   NOT NULL,
    freq      DOUBLE PRECISION NOT NULL,
    len       INTEGER NOT NULL,
    PRIMARY KEY (pk, term)
);

CREATE INDEX message_terms_by_user ON message_terms (tenant_id, user_id, term) INCLUDE (pk, freq, len);

-- Corpus statistics of BM25 (documents and tokens of each index), kept by
-- triggers. They are split into 16 rows per index, each transaction
-- updating the row its id picks, so concurrent writers seldom wait for one
-- another; a query sums them.
CREATE TABLE search_stats (
    kind   TEXT    NOT NULL CHECK (kind IN ('memory', 'message')),
    shard  INTEGER NOT NULL,
    docs   BIGINT  NOT NULL DEFAULT 0,
    tokens BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, shard)
);

INSERT INTO search_stats (kind, shard) SELECT k, s FROM unnest(ARRAY['memory', 'message']) AS k, generate_series(0, 15) AS s;

-- A bulk load (postgres.Bulk) sets memento.bulk for its transaction and
-- counts its rows once at the end instead: a row updated again and again
-- in one transaction leaves a version per update, each of which the next
-- update walks past.
CREATE FUNCTION search_stats_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('memento.bulk', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'INSERT' THEN
        UPDATE search_stats SET docs = docs + 1, tokens = tokens + new.len
        WHERE kind = TG_ARGV[0] AND shard = (txid_current() % 16)::INTEGER;
        RETURN new;
    END IF;
    UPDATE search_stats SET docs = docs - 1, tokens = tokens - old.len
    WHERE kind = TG_ARGV[0] AND shard = (txid_current() % 16)::INTEGER;
    RETURN old;
END $$;

CREATE TRIGGER memory_search_stats AFTER INSERT OR DELETE ON memory_search
    FOR EACH ROW EXECUTE FUNCTION search_stats_count('memory');
CREATE TRIGGER message_search_stats AFTER INSERT OR DELETE ON message_search
    FOR EACH ROW EXECUTE FUNCTION search_stats_count('message');

-- How many documents of each index hold each term, over every user (the
-- n of BM25's IDF), kept by statement triggers on the *_terms tables in
-- the same 16 shards by transaction, each statement's rows upserted in
-- term order.
CREATE TABLE term_stats (
    kind  TEXT    NOT NULL CHECK (kind IN ('memory', 'message')),
    term  TEXT    NOT NULL,
    shard INTEGER NOT NULL,
    docs  BIGINT  NOT NULL,
    PRIMARY KEY (kind, term, shard)
);

CREATE FUNCTION term_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('memento.bulk', true) = 'on' THEN
        RETURN NULL;
    END IF;
    INSERT INTO term_stats (kind, term, shard, docs)
    SELECT TG_ARGV[0], term, (txid_current() % 16)::INTEGER, count(*) FROM changed_rows GROUP BY term ORDER BY term
    ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs;
    RETURN NULL;
END $$;

CREATE FUNCTION term_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('memento.bulk', true) = 'on' THEN
        RETURN NULL;
    END IF;
    INSERT INTO term_stats (kind, term, shard, docs)
    SELECT TG_ARGV[0], term, (txid_current() % 16)::INTEGER, -count(*) FROM changed_rows GROUP BY term ORDER BY term
    ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs;
    RETURN NULL;
END $$;

CREATE TRIGGER memory_terms_add AFTER INSERT ON memory_terms REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION term_stats_add('memory');
CREATE TRIGGER memory_terms_remove AFTER DELETE ON memory_terms REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION term_stats_remove('memory');
CREATE TRIGGER message_terms_add AFTER INSERT ON message_terms REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION term_stats_add('message');
CREATE TRIGGER message_terms_remove AFTER DELETE ON message_terms REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION term_stats_remove('message');

-- A superseded memory leaves the keyword index; so does a message the
-- pipeline rejects as an instruction to the system.
CREATE FUNCTION memory_unindex() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_search WHERE pk = new.pk;
    RETURN new;
END $$;

CREATE TRIGGER memories_unindex AFTER UPDATE OF valid_to ON memories
    FOR EACH ROW WHEN (new.valid_to IS NOT NULL) EXECUTE FUNCTION memory_unindex();

CREATE FUNCTION message_unindex_rejected() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_search WHERE pk =
        (SELECT pk FROM messages WHERE tenant_id = new.tenant_id AND user_id = new.user_id AND id = new.message_id);
    RETURN new;
END $$;

CREATE TRIGGER memory_runs_rejected AFTER INSERT ON memory_runs
    FOR EACH ROW WHEN (new.outcome = 'rejected') EXECUTE FUNCTION message_unindex_rejected();

-- Graph checkpoints of pipeline runs, keyed per user.
CREATE TABLE graph_checkpoints (
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    key       TEXT   NOT NULL,
    graph     TEXT   NOT NULL,
    next      TEXT   NOT NULL,
    state     TEXT   NOT NULL,
    trace     TEXT   NOT NULL,
    done      BOOLEAN NOT NULL,
    saved_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, key),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);

-- The recall change log (see recall.go). Triggers append the key of every
-- changed memory or message, so no write path can forget to. Every write
-- transaction of a user holds the user's advisory lock from its start to
-- its commit, so a user's changes draw their seq in commit order and a
-- reader that has seen seq N of a user has seen every earlier change of
-- that user. at is milliseconds since the epoch, for pruning.
CREATE TABLE recall_changes (
    seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    kind      TEXT   NOT NULL CHECK (kind IN ('memory', 'message')),
    pk        BIGINT NOT NULL,
    at        BIGINT NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT
);

CREATE INDEX recall_changes_by_user ON recall_changes (tenant_id, user_id, seq);

CREATE TABLE recall_change_floor (
    id     INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    pruned BIGINT  NOT NULL
);

INSERT INTO recall_change_floor (id, pruned) VALUES (1, 0);

CREATE FUNCTION recall_log_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
BEGIN
    IF TG_OP = 'DELETE' THEN r := old; ELSE r := new; END IF;
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk) VALUES (r.tenant_id, r.user_id, TG_ARGV[0], r.pk);
    RETURN r;
END $$;

CREATE TRIGGER recall_memories AFTER INSERT OR UPDATE OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION recall_log_row('memory');
CREATE TRIGGER recall_messages AFTER INSERT OR UPDATE OR DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION recall_log_row('message');

CREATE FUNCTION recall_log_memory_vector() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k BIGINT;
BEGIN
    IF TG_OP = 'DELETE' THEN k := old.memory_pk; ELSE k := new.memory_pk; END IF;
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'memory', pk FROM memories WHERE pk = k;
    RETURN NULL;
END $$;

CREATE TRIGGER recall_memory_vectors AFTER INSERT OR UPDATE OR DELETE ON memory_vectors
    FOR EACH ROW EXECUTE FUNCTION recall_log_memory_vector();

CREATE FUNCTION recall_log_message_vector() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k BIGINT;
BEGIN
    IF TG_OP = 'DELETE' THEN k := old.message_pk; ELSE k := new.message_pk; END IF;
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'message', pk FROM messages WHERE pk = k;
    RETURN NULL;
END $$;

CREATE TRIGGER recall_message_vectors AFTER INSERT OR UPDATE OR DELETE ON message_vectors
    FOR EACH ROW EXECUTE FUNCTION recall_log_message_vector();

-- A rejected run changes what recall holds of its message.
CREATE FUNCTION recall_log_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r RECORD;
BEGIN
    IF TG_OP = 'DELETE' THEN r := old; ELSE r := new; END IF;
    IF r.outcome = 'rejected' OR (TG_OP = 'UPDATE' AND old.outcome = 'rejected') THEN
        INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
        SELECT tenant_id, user_id, 'message', pk FROM messages
        WHERE tenant_id = r.tenant_id AND user_id = r.user_id AND id = r.message_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER recall_runs AFTER INSERT OR UPDATE OR DELETE ON memory_runs
    FOR EACH ROW EXECUTE FUNCTION recall_log_run();
