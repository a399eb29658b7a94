-- 0009: every title a thread has shown, newest first (bounded by
-- memento.MaxShownRemembered), so a later answer puts titles shown two or
-- more answers ago after fresh ones, as it does the last answer's. Threads
-- stored before this migration start with the titles their last answer
-- showed.
ALTER TABLE threads ADD COLUMN shown TEXT NOT NULL DEFAULT '[]';
UPDATE threads SET shown = last_shown;
