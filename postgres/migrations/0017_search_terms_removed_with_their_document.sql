-- 0017: a document's terms leave the keyword index with the document, in
-- one statement a statement, and are counted there.
--
-- A document left the index by its row in *_search (a memory closed by
-- memory_unindex, a run rejected, a memory, message or user deleted),
-- whose foreign key cascaded to its terms: one DELETE of *_terms a
-- document, each firing a statement trigger that counted the terms,
-- beside the *_search statement's own trigger that counted the document.
-- Each term inserted was checked against its document too, one look-up a
-- term (a memory has about 25). The terms now have no foreign key: the
-- *_search deletion's statement trigger deletes the terms of every
-- document the statement removed, in one statement, and counts the
-- documents and terms in one call (search_count). A bulk load, which
-- counts its rows itself, still has the terms deleted, uncounted.
--
-- Terms are inserted only with their document (search.go) and deleted
-- only here, so none outlives its document.
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pk_fkey;
ALTER TABLE message_terms DROP CONSTRAINT message_terms_pk_fkey;
DROP TRIGGER memory_terms_remove ON memory_terms;
DROP TRIGGER message_terms_remove ON message_terms;
DROP TRIGGER memory_search_docs_remove ON memory_search;
DROP TRIGGER message_search_docs_remove ON message_search;
DROP FUNCTION search_terms_changed();
DROP FUNCTION search_docs_changed();

CREATE FUNCTION search_docs_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    terms  TEXT[];
    ns     BIGINT[];
    docs   BIGINT;
    tokens BIGINT;
BEGIN
    SELECT count(*), coalesce(sum(len), 0) INTO docs, tokens FROM removed;
    IF docs = 0 THEN
        RETURN NULL;
    END IF;
    IF TG_ARGV[0] = 'memory' THEN
        WITH gone AS (DELETE FROM memory_terms AS t USING removed AS r WHERE t.pk = r.pk RETURNING t.term)
        SELECT array_agg(term ORDER BY term), array_agg(-n ORDER BY term) INTO terms, ns
        FROM (SELECT term, count(*) AS n FROM gone GROUP BY term) AS c;
    ELSE
        WITH gone AS (DELETE FROM message_terms AS t USING removed AS r WHERE t.pk = r.pk RETURNING t.term)
        SELECT array_agg(term ORDER BY term), array_agg(-n ORDER BY term) INTO terms, ns
        FROM (SELECT term, count(*) AS n FROM gone GROUP BY term) AS c;
    END IF;
    IF current_setting('memento.bulk', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM search_count(TG_ARGV[0], coalesce(terms, '{}'), coalesce(ns, '{}'), -docs, -tokens);
    RETURN NULL;
END $$;

CREATE TRIGGER memory_search_removed AFTER DELETE ON memory_search REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION search_docs_removed('memory');
CREATE TRIGGER message_search_removed AFTER DELETE ON message_search REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION search_docs_removed('message');
