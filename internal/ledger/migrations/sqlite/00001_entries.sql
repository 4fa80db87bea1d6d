-- The ledger's entries (SQLite). Keep in step with ../postgres/00001_entries.sql:
-- the same columns and indexes; only the types that the dialects spell
-- differently differ (the sequence, the blob).

-- +goose Up
CREATE TABLE ledger_entries (
    -- seq is the rowid: AUTOINCREMENT so a number is never reused after a
    -- prune, which keeps it monotonic for keyset paging.
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    source         TEXT    NOT NULL,
    id             TEXT    NOT NULL,
    -- time_ns: Unix nanoseconds (UTC), an integer in both dialects so that
    -- one SQL text compares and orders it.
    time_ns        BIGINT  NOT NULL,
    user_name      TEXT    NOT NULL,
    groups_json    TEXT    NOT NULL,
    impersonator   TEXT    NOT NULL,
    user_agent     TEXT    NOT NULL,
    source_ips     TEXT    NOT NULL,
    verb           TEXT    NOT NULL,
    action         TEXT    NOT NULL,
    api_group      TEXT    NOT NULL,
    api_version    TEXT    NOT NULL,
    resource       TEXT    NOT NULL,
    subresource    TEXT    NOT NULL,
    kind           TEXT    NOT NULL,
    name           TEXT    NOT NULL,
    uid            TEXT    NOT NULL,
    signer         TEXT    NOT NULL,
    code           INTEGER NOT NULL,
    result         TEXT    NOT NULL,
    reason         TEXT    NOT NULL,
    dry_run        BOOLEAN NOT NULL,
    object         BLOB,
    object_dropped BOOLEAN NOT NULL,
    diff           TEXT    NOT NULL,
    UNIQUE (source, id)
);
-- One index per Query shape, each ending in the page order. In SQLite every
-- index ends in the rowid (seq) already.
CREATE INDEX ledger_entries_object ON ledger_entries (kind, name, time_ns);
CREATE INDEX ledger_entries_user   ON ledger_entries (user_name, time_ns);
CREATE INDEX ledger_entries_signer ON ledger_entries (signer, time_ns);
CREATE INDEX ledger_entries_time   ON ledger_entries (time_ns);

-- +goose Down
DROP TABLE ledger_entries;
