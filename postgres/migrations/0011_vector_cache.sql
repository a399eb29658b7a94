-- 0011: the vectors an embedder made for the catalog's titles, by the
-- embedder's id and the SHA-256 of the text (memento.VectorCache), so that
-- a restart, or another server, reads them rather than embedding 36,000
-- titles again. As SQLite's 0018.
CREATE TABLE IF NOT EXISTS vector_cache (
	embedder text NOT NULL,
	text_key bytea NOT NULL,
	vector bytea NOT NULL,
	PRIMARY KEY (embedder, text_key)
);
