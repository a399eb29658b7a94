-- 0018: the vectors an embedder made for the catalog's titles, by the
-- embedder's id and the SHA-256 of the text (memento.VectorCache), so that
-- a restart reads them rather than embedding 36,000 titles again. A rowid
-- table: a row holds a vector of a kilobyte or more, too wide to keep in
-- the primary key's b-tree.
CREATE TABLE vector_cache (
	embedder TEXT NOT NULL,
	text_key BLOB NOT NULL,
	vector BLOB NOT NULL,
	UNIQUE (embedder, text_key)
);
