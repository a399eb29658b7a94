-- 0007: the answer of each agent turn (its JSON as POST /v1/chat returns
-- it: titles with their reasons, notes, the memory used), kept with the
-- turn's assistant message, so a page reloaded later shows the cards of
-- every earlier turn and not only their text. Deleting the message (the
-- thread, the user) deletes the answer with it.
CREATE TABLE turn_answers (
    message_pk INTEGER NOT NULL PRIMARY KEY REFERENCES messages (pk) ON DELETE CASCADE,
    answer     TEXT    NOT NULL CHECK (json_valid(answer))
) STRICT;
