-- 0015: a background job's transaction changes the keyword index's
-- counters (search_stats, term_stats) once, at its commit, by the sum of
-- what its statements added and removed, where each statement's trigger
-- updated them.
--
-- A batch of a user's messages is one transaction of dozens of
-- statements: each message and memory indexed is one, each memory closed
-- another, and most of their terms are the same few ("like", the
-- attribute's words). Each statement upserted its terms' counter rows, so
-- one transaction updated a common term's row once a statement, each
-- update leaving a version the next one walked past, and held every row it
-- had written from its first statement to its commit: 68 k counter rows
-- upserted for 2,000 messages. A memory superseded in the transaction that
-- indexes its successor removed terms the successor then added back.
--
-- Now, in a transaction that set memento.search_fold (beginUser sets it
-- for a job's, insertMessages for an append of several messages), each statement's trigger appends its sums to
-- search_deltas, an unlogged table without conflicts whose rows live only
-- within their transaction. The transaction's first such statement also
-- inserts its id into search_delta_txs, whose deferred trigger folds the
-- transaction's rows into the counters when it commits, in one upsert of
-- the terms whose sum is not zero, in term order, and deletes them. The
-- counters' rows are thus held only while the transaction commits, in the
-- shard search_shard() picks then. A transaction that rolls back, or a
-- savepoint that does, takes its rows with it; a crash, which empties an
-- unlogged table, only ends transactions that never committed. Other
-- transactions (an append of one message: a statement, nothing to add up,
-- and a client waiting for the commit) count at once, as before.
--
-- Readers see the counters as before: committed transactions' sums. A
-- job's transaction no longer sees its own uncommitted changes in them,
-- which nothing read. A bulk load (memento.bulk) still counts its rows
-- itself. The documents' counts become statement triggers too: one update
-- a statement where it was one a row.
CREATE UNLOGGED TABLE search_deltas (
    tx     BIGINT NOT NULL,
    kind   TEXT   NOT NULL,
    term   TEXT,            -- NULL for the index's documents and tokens
    docs   BIGINT NOT NULL,
    tokens BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX search_deltas_by_tx ON search_deltas (tx);

CREATE UNLOGGED TABLE search_delta_txs (
    tx BIGINT NOT NULL PRIMARY KEY
);

-- search_deltas_pending marks the transaction as having deltas to fold,
-- once: memento.search_pending remembers it for the transaction (and is
-- undone with the insert by a savepoint's rollback).
CREATE FUNCTION search_deltas_pending() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('memento.search_pending', true) IS DISTINCT FROM 'on' THEN
        INSERT INTO search_delta_txs (tx) VALUES (txid_current()) ON CONFLICT DO NOTHING;
        PERFORM set_config('memento.search_pending', 'on', true);
    END IF;
END $$;

-- search_terms_count adds ns[i] to the documents of kind holding
-- terms[i], and search_docs_count adds docs and tokens to the index's
-- totals: staged for the commit in a transaction that set
-- memento.search_fold, at once in the transaction's shard otherwise.
CREATE FUNCTION search_terms_count(k TEXT, terms TEXT[], ns BIGINT[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF current_setting('memento.search_fold', true) = 'on' THEN
        INSERT INTO search_deltas (tx, kind, term, docs)
        SELECT x, k, t, n FROM unnest(terms, ns) AS u(t, n), txid_current() AS x;
        PERFORM search_deltas_pending();
        RETURN;
    END IF;
    s := search_shard();
    INSERT INTO term_stats (kind, term, shard, docs)
    SELECT k, t, s, n FROM unnest(terms, ns) AS x(t, n) ORDER BY t
    ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs;
END $$;

CREATE FUNCTION search_docs_count(k TEXT, docs BIGINT, tokens BIGINT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF current_setting('memento.search_fold', true) = 'on' THEN
        INSERT INTO search_deltas (tx, kind, term, docs, tokens) VALUES (txid_current(), k, NULL, docs, tokens);
        PERFORM search_deltas_pending();
        RETURN;
    END IF;
    s := search_shard();
    UPDATE search_stats AS st SET docs = st.docs + search_docs_count.docs, tokens = st.tokens + search_docs_count.tokens
    WHERE st.kind = k AND st.shard = s;
END $$;

CREATE FUNCTION search_deltas_fold() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s integer;
    r RECORD;
BEGIN
    s := search_shard();
    FOR r IN SELECT kind, sum(docs)::BIGINT AS docs, sum(tokens)::BIGINT AS tokens
        FROM search_deltas WHERE tx = new.tx AND term IS NULL GROUP BY kind ORDER BY kind
    LOOP
        IF r.docs <> 0 OR r.tokens <> 0 THEN
            UPDATE search_stats SET docs = docs + r.docs, tokens = tokens + r.tokens
            WHERE kind = r.kind AND shard = s;
        END IF;
    END LOOP;
    INSERT INTO term_stats (kind, term, shard, docs)
    SELECT kind, term, s, sum(docs)::BIGINT FROM search_deltas
    WHERE tx = new.tx AND term IS NOT NULL
    GROUP BY kind, term HAVING sum(docs) <> 0 ORDER BY kind, term
    ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs;
    DELETE FROM search_deltas WHERE tx = new.tx;
    DELETE FROM search_delta_txs WHERE tx = new.tx;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER search_deltas_fold AFTER INSERT ON search_delta_txs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION search_deltas_fold();

-- The index's triggers: the terms' were statement triggers already (0001,
-- 0013); the documents' were a row trigger on the *_search tables, one
-- update of a shared row per document. Each is now a statement trigger
-- (a trigger with transition tables takes one event) of one function a
-- table kind, which counts a deletion's rows negatively; TG_ARGV[0] is
-- the index.
DROP TRIGGER memory_terms_add ON memory_terms;
DROP TRIGGER memory_terms_remove ON memory_terms;
DROP TRIGGER message_terms_add ON message_terms;
DROP TRIGGER message_terms_remove ON message_terms;
DROP FUNCTION term_stats_add();
DROP FUNCTION term_stats_remove();
DROP TRIGGER memory_search_stats ON memory_search;
DROP TRIGGER message_search_stats ON message_search;
DROP FUNCTION search_stats_count();

CREATE FUNCTION search_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    sign BIGINT := CASE TG_OP WHEN 'DELETE' THEN -1 ELSE 1 END;
BEGIN
    IF current_setting('memento.bulk', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM search_terms_count(TG_ARGV[0], array_agg(term), array_agg(sign * n)) FROM
        (SELECT term, count(*) AS n FROM changed_rows GROUP BY term) AS c HAVING count(*) > 0;
    RETURN NULL;
END $$;

CREATE FUNCTION search_docs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    sign BIGINT := CASE TG_OP WHEN 'DELETE' THEN -1 ELSE 1 END;
BEGIN
    IF current_setting('memento.bulk', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM search_docs_count(TG_ARGV[0], sign * count(*), sign * sum(len)) FROM changed_rows HAVING count(*) > 0;
    RETURN NULL;
END $$;

CREATE TRIGGER memory_terms_add AFTER INSERT ON memory_terms REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_terms_changed('memory');
CREATE TRIGGER memory_terms_remove AFTER DELETE ON memory_terms REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_terms_changed('memory');
CREATE TRIGGER message_terms_add AFTER INSERT ON message_terms REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_terms_changed('message');
CREATE TRIGGER message_terms_remove AFTER DELETE ON message_terms REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_terms_changed('message');
CREATE TRIGGER memory_search_docs_add AFTER INSERT ON memory_search REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_docs_changed('memory');
CREATE TRIGGER memory_search_docs_remove AFTER DELETE ON memory_search REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_docs_changed('memory');
CREATE TRIGGER message_search_docs_add AFTER INSERT ON message_search REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_docs_changed('message');
CREATE TRIGGER message_search_docs_remove AFTER DELETE ON message_search REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_docs_changed('message');
