-- 0005: a commit-ordered mark on events, for the co-occurrence model's
-- incremental updates (EachUserEventsSince, profile.go).
--
-- The model remembers the largest mark it has read and later reads the
-- users with an event above it. Row numbers from a sequence are not enough
-- for that: a transaction that drew number 10 may commit after one that
-- drew 11, and a reader between the two commits would move past 10 for
-- good. So every event takes a mark from events_mark_seq only after taking
-- its tenant's events lock in shared mode (this trigger, whatever the
-- write path: service, import or bulk load), holding it to commit; a
-- reader of marks takes the same lock exclusively for the one statement
-- that reads the largest mark (postgres.eventsMarkLock), so no mark at or
-- below the one it reads is still uncommitted. Writers share the lock and
-- never wait for one another; a reader waits only for the event
-- transactions already under way.
--
-- Existing rows keep their row number as their mark, so a model saved
-- before this migration compares its mark with the new ones correctly.
CREATE SEQUENCE events_mark_seq;

ALTER TABLE events ADD COLUMN mark BIGINT;
UPDATE events SET mark = pk;
ALTER TABLE events ALTER COLUMN mark SET NOT NULL;
SELECT setval('events_mark_seq', coalesce((SELECT max(pk) FROM events), 0) + 1, false);

-- 1835363685 is "meme" in ASCII: the class of the events locks, keyed by
-- the tenant's hash (the two-integer advisory locks are a space apart from
-- the user locks, which take one bigint).
CREATE FUNCTION events_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1835363685, hashtext(new.tenant_id));
    new.mark := nextval('events_mark_seq');
    RETURN new;
END;
$$;

CREATE TRIGGER events_mark BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION events_mark();

CREATE INDEX events_by_mark ON events (tenant_id, mark);
