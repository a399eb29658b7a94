-- 0021: a profile model saved in parts. The tenant's co-occurrence model
-- is megabytes, and writing it as one value held the store's one writer
-- for as long as that took (8 ms at 1.1 M memories) while appends waited.
-- A model larger than a part is now written a part at a time, each part a
-- write of its own, then made current by one small write that points the
-- model's row at them: stage names the save that wrote the parts, and
-- parts how many there are (0: the model is in data, as before).
ALTER TABLE profile_models ADD COLUMN stage TEXT;
ALTER TABLE profile_models ADD COLUMN parts INTEGER NOT NULL DEFAULT 0;

CREATE TABLE profile_model_parts (
    tenant_id TEXT    NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name      TEXT    NOT NULL,
    stage     TEXT    NOT NULL,
    part      INTEGER NOT NULL,
    data      BLOB    NOT NULL,
    PRIMARY KEY (tenant_id, name, stage, part)
) STRICT;
