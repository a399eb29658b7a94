-- 0013: each write transaction counts its keyword index rows into a shard
-- of the counters (search_stats, term_stats) that no other transaction
-- under way holds, where 0001 took the transaction's id modulo 16. A
-- counter row stays locked from a transaction's first write of it to its
-- commit, and a common term ("like", say) is in most documents: with two
-- dozen writers at once (the queue's workers and the appends), two of them
-- fell on one shard most of the time, and the later one, an append among
-- them, waited for the other's whole transaction.
--
-- search_shard() picks the transaction's shard once: the first of 64,
-- from its id on, whose advisory lock (class "mems", held to the end of
-- the transaction) it can take without waiting, and remembers it for the
-- transaction (memento.search_shard). Both go with a subtransaction that
-- rolls back, so the next call picks again. When every shard is held it
-- shares the one its id names and waits for its rows, as before. Readers
-- sum the shards, so how rows are spread does not change any count.
INSERT INTO search_stats (kind, shard)
SELECT k, s FROM unnest(ARRAY['memory', 'message']) AS k, generate_series(0, 63) AS s
ON CONFLICT (kind, shard) DO NOTHING;

CREATE OR REPLACE FUNCTION search_shard() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    held  text := current_setting('memento.search_shard', true);
    first integer;
    s     integer;
BEGIN
    IF held IS NOT NULL AND held <> '' THEN
        RETURN held::integer;
    END IF;
    first := (txid_current() % 64)::integer;
    s := first;
    FOR i IN 0..63 LOOP
        s := (first + i) % 64;
        EXIT WHEN pg_try_advisory_xact_lock(1835363699, s);
        s := NULL;
    END LOOP;
    s := coalesce(s, first);
    PERFORM set_config('memento.search_shard', s::text, true);
    RETURN s;
END $$;

CREATE OR REPLACE FUNCTION search_stats_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF current_setting('memento.bulk', true) = 'on' THEN
        RETURN NULL;
    END IF;
    s := search_shard();
    IF TG_OP = 'INSERT' THEN
        UPDATE search_stats SET docs = docs + 1, tokens = tokens + new.len
        WHERE kind = TG_ARGV[0] AND shard = s;
        RETURN new;
    END IF;
    UPDATE search_stats SET docs = docs - 1, tokens = tokens - old.len
    WHERE kind = TG_ARGV[0] AND shard = s;
    RETURN old;
END $$;

CREATE OR REPLACE FUNCTION term_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF current_setting('memento.bulk', true) = 'on' OR NOT EXISTS (SELECT 1 FROM changed_rows) THEN
        RETURN NULL;
    END IF;
    s := search_shard();
    INSERT INTO term_stats (kind, term, shard, docs)
    SELECT TG_ARGV[0], term, s, count(*) FROM changed_rows GROUP BY term ORDER BY term
    ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION term_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF current_setting('memento.bulk', true) = 'on' OR NOT EXISTS (SELECT 1 FROM changed_rows) THEN
        RETURN NULL;
    END IF;
    s := search_shard();
    INSERT INTO term_stats (kind, term, shard, docs)
    SELECT TG_ARGV[0], term, s, -count(*) FROM changed_rows GROUP BY term ORDER BY term
    ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs;
    RETURN NULL;
END $$;
