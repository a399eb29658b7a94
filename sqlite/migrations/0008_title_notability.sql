-- 0008: the notability prior of each stored title (0 to 1; see
-- memento.Title.Notability), so an imported catalog served from the
-- store keeps the order it was imported with. Titles stored before this
-- migration get 0 until they are imported again.
ALTER TABLE titles ADD COLUMN notability REAL NOT NULL DEFAULT 0 CHECK (notability >= 0 AND notability <= 1);
