-- 0006: the processes that run the job queue on this file. Each started
-- queue (a River client) has a row named by its client id, which River
-- also appends to river_job.attempted_by when the queue takes a job, and
-- renews heartbeat_at every fifth of its lease. A running job whose
-- process has not renewed its lease in lease_ms (or has no row at all) was
-- lost with that process, and any other queue on the file makes it
-- available again (queue_lease.go), so a crash stalls jobs for about one
-- lease instead of River's job timeout plus a minute.
--
-- Times are milliseconds since the Unix epoch from SQLite's own clock
-- (unixepoch), so every process on the file stamps and judges leases by
-- one clock: a file in WAL mode is shared only by processes of one host.
CREATE TABLE queue_processes (
    id           TEXT    NOT NULL PRIMARY KEY,
    pid          INTEGER NOT NULL,
    host         TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    lease_ms     INTEGER NOT NULL CHECK (lease_ms > 0)
) STRICT;
