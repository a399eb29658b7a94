-- 0008: leases that serialise the turns of one thread across processes
-- (memento.ThreadLocker). A row exists while a turn holds its thread; a
-- process that dies leaves its row, which the next turn takes over once
-- expires_at has passed. Times are the server's, so the processes' clocks
-- need not agree.
CREATE TABLE thread_locks (
    tenant_id  TEXT        NOT NULL,
    user_id    TEXT        NOT NULL,
    thread_id  TEXT        NOT NULL,
    owner      TEXT        NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, user_id, thread_id)
);
