-- 0016: the messages have one full-text index, message_search. Since 0002
-- every message was indexed twice with the same tokenizer: by
-- messages_fts, which SearchMessages read, and by message_search, which
-- recall reads. Each append paid for both inserts, both segments at its
-- commit and both indexes' merges; SearchMessages now reads
-- message_search, narrowed to the user by its scope column.
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
