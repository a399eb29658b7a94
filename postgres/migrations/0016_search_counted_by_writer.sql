-- 0016: the statement that indexes documents no longer has a trigger
-- count them; the writer, which has their terms in hand (package
-- fulltext runs in Go), adds them up over its round trip and counts them
-- in one statement (search.go, searchCounts): an append over its
-- messages, a batch of a user's memory writes over its memories.
--
-- Each insert into *_search and *_terms fired two statement triggers
-- with transition tables, each calling a function that counted at once
-- or staged its sums (0015): four trigger calls, two of them
-- materialising the inserted terms again, for each message appended and
-- each memory written, where one call a round trip now counts what the
-- round trip indexed. What is counted is unchanged: search_terms_count
-- and search_docs_count still stage the sums in a transaction that set
-- memento.search_fold and count at once otherwise.
--
-- Deletions keep their triggers. Documents leave the index by a cascade
-- from a memory or message deleted, a memory closed (memory_unindex), a
-- run rejected, a user forgotten: many paths, none of which holds the
-- terms, so the removal is counted where the rows go.
--
-- Every path that inserts into the index counts: insertMessages,
-- memoryInsert (writeMemories, insertMemory), index (UpdateMemory), and
-- a bulk load, which counts its own rows at its end (countBulkRows).
DROP TRIGGER memory_terms_add ON memory_terms;
DROP TRIGGER message_terms_add ON message_terms;
DROP TRIGGER memory_search_docs_add ON memory_search;
DROP TRIGGER message_search_docs_add ON message_search;

-- search_count counts docs documents of tokens tokens in all, holding
-- terms[i] ns[i] times between them, into kind's counters.
CREATE FUNCTION search_count(k TEXT, terms TEXT[], ns BIGINT[], docs BIGINT, tokens BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(terms) > 0 THEN
        PERFORM search_terms_count(k, terms, ns);
    END IF;
    IF docs <> 0 OR tokens <> 0 THEN
        PERFORM search_docs_count(k, docs, tokens);
    END IF;
END $$;
