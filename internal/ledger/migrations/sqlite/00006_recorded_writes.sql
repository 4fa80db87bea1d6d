-- Issue 45. Keep in step with ../postgres/00006_recorded_writes.sql.
--
-- The recorded writes the replay of an admission change reads
-- (internal/ledger/writes.go): every write the API server's audit webhook
-- reports at RequestResponse, of any resource, not only the console's kinds.
-- A table of its own, not ledger_entries: its rows are many more (a cluster's
-- every write), shorter-lived (days, not the ledger's year) and read in one
-- order only (seq, streaming), never by the ledger's views.
--
-- id: the SHA-256 of the audit event as received, as the ledger entry's id
-- (internal/ingest eventID): a retried batch is stored once, and a write of
-- a console kind links to its ledger entry by it.
-- object: the object as admission saw it (gzip JSON): the responseObject of
-- an accepted write, the requestObject of a refused create or update, NULL
-- when unknown (a refused patch, a delete).
-- obj_key: group/resource/namespace/name; prev_seq the previous applied write
-- of the same obj_key (the object before this write, read by a join on the
-- primary key), NULL for a create or when it was not recorded.
-- applied: 2xx and not a dry run, so the object became `object`.

-- +goose Up
CREATE TABLE recorded_writes (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT    NOT NULL UNIQUE,
    audit_id       TEXT    NOT NULL,
    time_ns        INTEGER NOT NULL,
    user_name      TEXT    NOT NULL,
    user_uid       TEXT    NOT NULL,
    groups_json    TEXT    NOT NULL,
    verb           TEXT    NOT NULL,
    operation      TEXT    NOT NULL,
    api_group      TEXT    NOT NULL,
    api_version    TEXT    NOT NULL,
    resource       TEXT    NOT NULL,
    subresource    TEXT    NOT NULL,
    namespace      TEXT    NOT NULL,
    name           TEXT    NOT NULL,
    obj_key        TEXT    NOT NULL,
    code           INTEGER NOT NULL,
    dry_run        BOOLEAN NOT NULL,
    applied        BOOLEAN NOT NULL,
    object         BLOB,
    object_dropped BOOLEAN NOT NULL,
    prev_seq       INTEGER,
    annotations    TEXT    NOT NULL
);
CREATE INDEX recorded_writes_prev ON recorded_writes (obj_key, seq) WHERE applied;
CREATE INDEX recorded_writes_time ON recorded_writes (time_ns);

-- +goose Down
DROP TABLE recorded_writes;
