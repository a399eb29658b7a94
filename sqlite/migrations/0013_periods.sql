-- 0013: what each message and memory tells of time (issue 15). A text
-- tells when things happened relative to when it was said ("yesterday",
-- "last week", "in May", "two years ago"); the store resolves those
-- expressions against the row's own time (a message's at, a memory's
-- valid_from) with fulltext.When when it writes the row, and keeps them
-- here in memento.FormatPeriods' form: '' for a text that tells no time,
-- else a JSON array of [from, to] pairs in Unix seconds ('[]' when it
-- tells a time it names no period of). Recall matches a question's times
-- against them without reading every candidate's text again.
--
-- NULL means not resolved yet: the rows stored before this migration.
-- Readers resolve such a row from its text when they read it, and the
-- store back-fills them in batches after it opens (sqlite/periods.go),
-- finding them through the partial indexes below, which are empty once
-- that is done. A change to the rules of fulltext.When can set the column
-- back to NULL in a later migration to have every row resolved again.
ALTER TABLE messages ADD COLUMN periods TEXT;
ALTER TABLE memories ADD COLUMN periods TEXT;

CREATE INDEX messages_periods_unresolved ON messages (pk) WHERE periods IS NULL;
CREATE INDEX memories_periods_unresolved ON memories (pk) WHERE periods IS NULL;
