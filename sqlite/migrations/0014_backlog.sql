-- 0014: the users' backlogs (memento.JobRequest.ByUser, backlog.go). A job
-- enqueued by user is a row of backlog, in the transaction of its data,
-- instead of a River job of its own; ids are in commit order (one writer),
-- which is the order a user's batch runs its jobs in. backlog_users holds,
-- per user, the River job (kind "backlog") that will take the user's
-- backlog next, if one waits (job_id), and the queue process that holds
-- the user's backlog now (owner), so that one batch of a user runs at a
-- time across every process on the file. An owner that is not a live
-- queue process (queue_processes, queue_lease.go) holds nothing.
CREATE TABLE backlog (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT    NOT NULL,
    user_id      TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    payload      TEXT    NOT NULL,
    max_attempts INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX backlog_by_user ON backlog (tenant_id, user_id, id);

CREATE TABLE backlog_users (
    tenant_id TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    job_id    INTEGER,
    owner     TEXT,
    PRIMARY KEY (tenant_id, user_id)
) STRICT;

-- The queue's profile model job looks for new events by the largest pk of
-- the tenant's events (EventsMark, every quarter of a second while a burst
-- lasts) and reads the users who have events past a mark
-- (EachUserEventsSince): without this index each is a scan of every event
-- of the tenant, a tenth of the background work at a million memories.
-- PostgreSQL has had its own (events_by_mark) since its 0005.
CREATE INDEX events_by_tenant ON events (tenant_id, pk);
