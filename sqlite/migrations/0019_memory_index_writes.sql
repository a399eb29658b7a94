-- 0019: the writes that insert memories add them to memories_fts
-- themselves, after their other statements (memory.go, "Memories in the
-- full-text index"), rather than by a trigger on each insert. FTS5 writes
-- the terms it holds as a new segment whenever a statement opens a
-- statement savepoint, which SQLite does for every statement that fires a
-- trigger: with the trigger, a batch of the pipeline's writes left a
-- one-row segment per memory, each then merged. The triggers of updates
-- and deletes stay.
DROP TRIGGER memories_fts_insert;
