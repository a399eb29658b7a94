-- 0018: a statement that changes memories or vectors logs its changes for
-- recall, and unindexes the memories it closed, once, whatever the number
-- of its rows.
--
-- A batch of a user's memory writes is a few statements over all its
-- writes (memory.go, batchPlan): one closes every memory stored before the
-- batch that a write supersedes, one inserts every memory with its vector
-- and keyword entries. Row triggers would still run once a row: a call to
-- log each memory and each vector in recall_changes (the vector's reading
-- its memory again), and for each closed memory a DELETE of its keyword
-- document, each with its own statement trigger deleting and counting
-- its terms (0017). Statement triggers over the transition tables do each
-- of these once a statement: the keyword deletion is one statement, so
-- search_docs_removed runs once for all of a batch's closes.
--
-- Messages keep their row trigger (recall_log_row): an append inserts one
-- message a statement, mostly, and a transition table would cost it more.
DROP TRIGGER recall_memories ON memories;
DROP TRIGGER memories_unindex ON memories;
DROP FUNCTION memory_unindex();
DROP TRIGGER recall_memory_vectors ON memory_vectors;
DROP TRIGGER recall_message_vectors ON message_vectors;
DROP FUNCTION recall_log_memory_vector();
DROP FUNCTION recall_log_message_vector();

CREATE FUNCTION recall_log_memories() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'memory', pk FROM changed ORDER BY pk;
    RETURN NULL;
END $$;

CREATE TRIGGER recall_memories_insert AFTER INSERT ON memories REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_memories();
CREATE TRIGGER recall_memories_update AFTER UPDATE ON memories REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_memories();
CREATE TRIGGER recall_memories_delete AFTER DELETE ON memories REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_memories();

-- A memory closed (valid_to set) leaves the keyword index; one that was
-- closed already has no document to delete.
CREATE FUNCTION memories_unindex() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_search AS s USING changed AS c WHERE s.pk = c.pk AND c.valid_to IS NOT NULL;
    RETURN NULL;
END $$;

CREATE TRIGGER memories_unindex AFTER UPDATE ON memories REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION memories_unindex();

-- A vector changed changes its memory or message for recall. A vector
-- deleted with its memory or message (a cascade) finds it gone: the
-- deletion of the memory or message logged it.
CREATE FUNCTION recall_log_vectors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_ARGV[0] = 'memory' THEN
        INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
        SELECT m.tenant_id, m.user_id, 'memory', m.pk FROM memories AS m
        WHERE m.pk IN (SELECT memory_pk FROM changed) ORDER BY m.pk;
    ELSE
        INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
        SELECT m.tenant_id, m.user_id, 'message', m.pk FROM messages AS m
        WHERE m.pk IN (SELECT message_pk FROM changed) ORDER BY m.pk;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER recall_memory_vectors_insert AFTER INSERT ON memory_vectors REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_vectors('memory');
CREATE TRIGGER recall_memory_vectors_update AFTER UPDATE ON memory_vectors REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_vectors('memory');
CREATE TRIGGER recall_memory_vectors_delete AFTER DELETE ON memory_vectors REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_vectors('memory');
CREATE TRIGGER recall_message_vectors_insert AFTER INSERT ON message_vectors REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_vectors('message');
CREATE TRIGGER recall_message_vectors_update AFTER UPDATE ON message_vectors REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_vectors('message');
CREATE TRIGGER recall_message_vectors_delete AFTER DELETE ON message_vectors REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION recall_log_vectors('message');
