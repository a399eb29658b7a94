-- 0012: the user's preference version at which each preference was last
-- written, so an incremental clustering reads only the preferences changed
-- since the version it holds (PreferencesSince). Rows written before this
-- migration count as version 0: a reader holding nothing reads them all.
-- The index by version replaces the one by embedder, as SQLite's 0020.
ALTER TABLE preferences ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS preferences_by_embedder;
CREATE INDEX IF NOT EXISTS preferences_by_version ON preferences (tenant_id, user_id, version);
