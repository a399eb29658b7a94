-- 0010: threads keep one index on updated_at, threads_by_updated (0002),
-- which the snapshots read across users. threads_by_update (tenant_id,
-- user_id, updated_at DESC), from 0001, served Threads, which lists every
-- thread of a user: the primary key's (tenant_id, user_id) prefix finds
-- the same rows, and sorting one user's threads costs less than keeping
-- the index, which every append, saved turn and change of a thread's
-- context updates. As SQLite's 0017.
DROP INDEX IF EXISTS threads_by_update;
