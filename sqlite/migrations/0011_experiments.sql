-- 0011: between-subjects studies (package experiment). A study names its
-- arms (each a memory mode) and keeps its questionnaire instrument as
-- JSON, so a study's data stay readable if the shipped file changes. A
-- participant's row holds the arm drawn at enrolment, the Memento user
-- the conversation runs as, the stage reached, and the answers. Rows do
-- not reference users: deleting a user's memory leaves the study's
-- responses, which hold no conversation text.
CREATE TABLE experiments (
    name       TEXT    NOT NULL PRIMARY KEY,
    arms       TEXT    NOT NULL,
    instrument TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE experiment_participants (
    experiment   TEXT    NOT NULL REFERENCES experiments (name) ON DELETE CASCADE,
    id           TEXT    NOT NULL,
    seq          INTEGER NOT NULL,
    arm          TEXT    NOT NULL,
    mode         TEXT    NOT NULL,
    tenant_id    TEXT    NOT NULL,
    user_id      TEXT    NOT NULL,
    thread_id    TEXT    NOT NULL,
    stage        TEXT    NOT NULL CHECK (stage IN ('demographics', 'conversation', 'done')),
    demographics TEXT,
    answers      TEXT,
    consented_at INTEGER NOT NULL,
    completed_at INTEGER,
    PRIMARY KEY (experiment, id),
    UNIQUE (experiment, seq)
);

CREATE INDEX experiment_participants_arm ON experiment_participants (experiment, arm);
