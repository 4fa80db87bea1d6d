-- Issue 44. Keep in step with ../sqlite/00005_versions.sql.
--
-- One history stack: the versions the console's watch observes are ledger
-- entries (source 'watch'), beside the API server's audit events and the
-- console's records of the same writes.
--
-- resource_version: the object's resourceVersion the entry's write left
-- (the audit event's responseObject, the console's record) or the watch
-- observed; '' when unknown. An object's history shows each version once:
-- a watch entry whose (uid, resource_version) an accepted write also has is
-- left out (query.go, oneEntryPerVersion), and ledger_entries_version finds
-- that write.
--
-- manager: the field managers a watch entry credits (managedFields that are
-- new or newer in the observed version); a field manager is not a person.

-- +goose Up
ALTER TABLE ledger_entries ADD COLUMN resource_version TEXT NOT NULL DEFAULT '';
ALTER TABLE ledger_entries ADD COLUMN manager TEXT NOT NULL DEFAULT '';
CREATE INDEX ledger_entries_version ON ledger_entries (uid, resource_version);

-- +goose Down
DROP INDEX ledger_entries_version;
ALTER TABLE ledger_entries DROP COLUMN manager;
ALTER TABLE ledger_entries DROP COLUMN resource_version;
