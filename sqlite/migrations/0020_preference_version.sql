-- 0020: the user's preference version at which each preference was last
-- written, so an incremental clustering reads only the preferences changed
-- since the version it holds (PreferencesSince). Rows written before this
-- migration count as version 0: a reader holding nothing reads them all.
--
-- The index by version replaces the one by embedder: a write reads a
-- user's preferences of one embedder through the user's primary-key range
-- as well (tens of rows), and an update, which sets every column, rewrote
-- the embedder's index entry as it now rewrites the version's, so the
-- writer keeps one secondary index as before.
ALTER TABLE preferences ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
DROP INDEX preferences_by_embedder;
CREATE INDEX preferences_by_version ON preferences (tenant_id, user_id, version);
