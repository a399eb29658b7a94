-- 0004: preference memory. Signed, decaying preference concepts with their
-- embeddings, the sources already applied (so a message or event processed
-- twice changes nothing), a per-user version that drives the debounced
-- clustering job, and the clusters with each member's stance. Every table
-- cascades from users, so forgetting a user forgets all of it.

-- One preference memory. weight is the signed stored weight as of
-- last_seen (decay is computed when reading). vector is dim little-endian
-- float32 values made by the embedder named in embedder. sources is a JSON
-- array of message and event ids, oldest first.
CREATE TABLE preferences (
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    concept    TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('taste', 'fact')),
    weight     REAL    NOT NULL,
    evidence   INTEGER NOT NULL,
    sources    TEXT    NOT NULL DEFAULT '[]',
    embedder   TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    vector     BLOB    NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT;

CREATE INDEX preferences_by_embedder ON preferences (tenant_id, user_id, embedder);

-- The messages and events whose evidence has been applied, applied or not
-- it changed anything.
CREATE TABLE preference_sources (
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    source_id  TEXT    NOT NULL,
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, source_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- version counts changes to the user's preferences; clustered_version is
-- the version the stored clusters were computed from. cluster_requested_at
-- is set while a clustering job is pending (NULL otherwise), so a burst of
-- changes enqueues one job.
CREATE TABLE preference_state (
    tenant_id            TEXT    NOT NULL,
    user_id              TEXT    NOT NULL,
    version              INTEGER NOT NULL DEFAULT 0,
    clustered_version    INTEGER NOT NULL DEFAULT 0,
    cluster_requested_at INTEGER,
    PRIMARY KEY (tenant_id, user_id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

-- signature names the members and their signs when the cluster was
-- described, so an unchanged cluster keeps its description.
CREATE TABLE preference_clusters (
    tenant_id   TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    description TEXT    NOT NULL,
    signature   TEXT    NOT NULL DEFAULT '',
    version     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
) STRICT;

-- position keeps the order of the members as the describer saw them.
CREATE TABLE preference_cluster_members (
    tenant_id     TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    cluster_id    TEXT    NOT NULL,
    preference_id TEXT    NOT NULL,
    stance        TEXT    NOT NULL CHECK (stance IN ('support', 'oppose')),
    position      INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, cluster_id, preference_id),
    FOREIGN KEY (tenant_id, user_id, cluster_id) REFERENCES preference_clusters (tenant_id, user_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, user_id, preference_id) REFERENCES preferences (tenant_id, user_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX preference_cluster_members_by_preference ON preference_cluster_members (tenant_id, user_id, preference_id);
