-- 0015: the full-text indexes merge their segments in the background
-- (ftsmerge.go) instead of inside the writes. With automerge on, FTS5
-- merges a little after every write that adds a segment, inside that
-- write's transaction: on a store of millions of messages an append
-- waited up to 130 ms for it, and every acknowledgement behind it too.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
INSERT INTO message_search (message_search, rank) VALUES ('automerge', 0);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('automerge', 0);
