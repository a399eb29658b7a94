-- 0005: the change log of recall's documents. Recall keeps each active
-- user's memories and messages warm in an in-process index
-- (recall.Index); this log tells it, with one indexed read, which of a
-- user's rows changed since it last looked, whoever wrote them (this
-- process, another one on the same file, a bulk load). Triggers write it,
-- so no write path can forget to.
--
-- A row names the changed memory or message by its pk; the reader reloads
-- the row as it is now (gone or superseded means removed). seq is the
-- order of commits, since SQLite has one writer at a time. Old rows are
-- pruned (DB.PruneRecallChanges), and recall_change_floor records the last
-- seq pruned, so a reader that last looked before it knows to reload
-- everything instead of trusting an incomplete log.
CREATE TABLE recall_changes (
    seq       INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    kind      TEXT    NOT NULL CHECK (kind IN ('memory', 'message')),
    pk        INTEGER NOT NULL,
    at        INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER))
) STRICT;

CREATE INDEX recall_changes_by_user ON recall_changes (tenant_id, user_id, seq);

CREATE TABLE recall_change_floor (
    id     INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    pruned INTEGER NOT NULL
) STRICT;

INSERT INTO recall_change_floor (id, pruned) VALUES (1, 0);

CREATE TRIGGER recall_memory_insert AFTER INSERT ON memories BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk) VALUES (new.tenant_id, new.user_id, 'memory', new.pk);
END;

CREATE TRIGGER recall_memory_update AFTER UPDATE ON memories BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk) VALUES (new.tenant_id, new.user_id, 'memory', new.pk);
END;

CREATE TRIGGER recall_memory_delete AFTER DELETE ON memories BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk) VALUES (old.tenant_id, old.user_id, 'memory', old.pk);
END;

CREATE TRIGGER recall_message_insert AFTER INSERT ON messages BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk) VALUES (new.tenant_id, new.user_id, 'message', new.pk);
END;

CREATE TRIGGER recall_message_update AFTER UPDATE ON messages BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk) VALUES (new.tenant_id, new.user_id, 'message', new.pk);
END;

CREATE TRIGGER recall_message_delete AFTER DELETE ON messages BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk) VALUES (old.tenant_id, old.user_id, 'message', old.pk);
END;

-- An embedding written (or replaced, by memento reembed) after its row.
-- When the row itself is being deleted, its own trigger logs the change.
CREATE TRIGGER recall_memory_vector_insert AFTER INSERT ON memory_vectors BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'memory', pk FROM memories WHERE pk = new.memory_pk;
END;

CREATE TRIGGER recall_memory_vector_update AFTER UPDATE ON memory_vectors BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'memory', pk FROM memories WHERE pk = new.memory_pk;
END;

CREATE TRIGGER recall_memory_vector_delete AFTER DELETE ON memory_vectors BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'memory', pk FROM memories WHERE pk = old.memory_pk;
END;

CREATE TRIGGER recall_message_vector_insert AFTER INSERT ON message_vectors BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'message', pk FROM messages WHERE pk = new.message_pk;
END;

CREATE TRIGGER recall_message_vector_update AFTER UPDATE ON message_vectors BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'message', pk FROM messages WHERE pk = new.message_pk;
END;

CREATE TRIGGER recall_message_vector_delete AFTER DELETE ON message_vectors BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'message', pk FROM messages WHERE pk = old.message_pk;
END;

-- A message the pipeline rejects as an instruction to the system is never
-- recalled: the run's outcome changes what the index holds of it.
CREATE TRIGGER recall_run_insert AFTER INSERT ON memory_runs WHEN new.outcome = 'rejected' BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'message', pk FROM messages
    WHERE tenant_id = new.tenant_id AND user_id = new.user_id AND id = new.message_id;
END;

CREATE TRIGGER recall_run_update AFTER UPDATE OF outcome ON memory_runs
WHEN new.outcome = 'rejected' OR old.outcome = 'rejected' BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'message', pk FROM messages
    WHERE tenant_id = new.tenant_id AND user_id = new.user_id AND id = new.message_id;
END;

CREATE TRIGGER recall_run_delete AFTER DELETE ON memory_runs WHEN old.outcome = 'rejected' BEGIN
    INSERT INTO recall_changes (tenant_id, user_id, kind, pk)
    SELECT tenant_id, user_id, 'message', pk FROM messages
    WHERE tenant_id = old.tenant_id AND user_id = old.user_id AND id = old.message_id;
END;
