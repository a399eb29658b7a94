-- 0017: threads keep one index on updated_at, threads_by_updated (0003),
-- which the snapshots read across users. threads_by_update (tenant_id,
-- user_id, updated_at DESC), from 0001, served Threads, which lists every
-- thread of a user: the primary key's (tenant_id, user_id) prefix finds
-- the same rows, with the columns Threads reads, and the sort of one
-- user's threads is cheaper than a lookup of each row from the index. Yet
-- every append, every saved turn and every change of a thread's context
-- moves the thread's entry in it: a page of the log each (about one page
-- in sixteen of a single message's append).
DROP INDEX threads_by_update;
