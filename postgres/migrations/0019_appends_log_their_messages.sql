-- 0019: an append logs its messages for recall in its own statement, and
-- counts the keyword index in one function call.
--
-- An append inserts each message with one statement (message.go,
-- insertMessages), which now also inserts the message's row in
-- recall_changes, as Bulk.Message does: the row trigger's plpgsql call a
-- message is gone. Updates and deletions of messages are still logged by
-- the trigger.
DROP TRIGGER recall_messages ON messages;
CREATE TRIGGER recall_messages AFTER UPDATE OR DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION recall_log_row('message');

-- search_count did its work through two more functions, each its own
-- plpgsql call, and each looked up the transaction's shard and its mode
-- again; it now does both counts itself, with one look-up of each, and
-- the two are dropped (nothing else calls them).
CREATE OR REPLACE FUNCTION search_count(k TEXT, terms TEXT[], ns BIGINT[], docs BIGINT, tokens BIGINT) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s integer;
BEGIN
    IF cardinality(terms) = 0 AND docs = 0 AND tokens = 0 THEN
        RETURN;
    END IF;
    IF current_setting('memento.search_fold', true) = 'on' THEN
        INSERT INTO search_deltas (tx, kind, term, docs, tokens)
        SELECT x, k, t, n, 0 FROM unnest(terms, ns) AS u(t, n), txid_current() AS x
        UNION ALL
        SELECT txid_current(), k, NULL, docs, tokens WHERE docs <> 0 OR tokens <> 0;
        PERFORM search_deltas_pending();
        RETURN;
    END IF;
    s := search_shard();
    IF cardinality(terms) > 0 THEN
        INSERT INTO term_stats (kind, term, shard, docs)
        SELECT k, t, s, n FROM unnest(terms, ns) AS x(t, n) ORDER BY t
        ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs;
    END IF;
    IF docs <> 0 OR tokens <> 0 THEN
        UPDATE search_stats AS st SET docs = st.docs + search_count.docs, tokens = st.tokens + search_count.tokens
        WHERE st.kind = k AND st.shard = s;
    END IF;
END $$;

DROP FUNCTION search_terms_count(TEXT, TEXT[], BIGINT[]);
DROP FUNCTION search_docs_count(TEXT, BIGINT, BIGINT);
