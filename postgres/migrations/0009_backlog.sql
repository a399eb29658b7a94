-- 0009: the users' backlogs (memento.JobRequest.ByUser, backlog.go). A job
-- enqueued by user is a row of backlog, inserted in the transaction of its
-- data under the user's advisory lock, so one user's ids follow the order
-- that user's transactions committed in: the order a batch runs them in.
-- backlog_users holds, per user, the River job (kind "backlog") that will
-- take the user's backlog next, if one waits (job_id), and the queue
-- process whose batch holds the user's backlog now (owner): one batch of a
-- user runs at a time across every process. An owner that is not a live
-- queue process (queue_processes, lease.go) holds nothing.
CREATE TABLE backlog (
    id           BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    TEXT        NOT NULL,
    user_id      TEXT        NOT NULL,
    kind         TEXT        NOT NULL,
    payload      TEXT        NOT NULL,
    max_attempts INTEGER     NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX backlog_by_user ON backlog (tenant_id, user_id, id);

CREATE TABLE backlog_users (
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    job_id    BIGINT,
    owner     TEXT,
    PRIMARY KEY (tenant_id, user_id)
);
