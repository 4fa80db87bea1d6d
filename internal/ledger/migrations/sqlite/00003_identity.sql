-- Issue 43. Keep in step with ../postgres/00003_identity.sql.
--
-- audit_id: the API server's audit ID, shown beside the entry. It was the
-- entry's id, which a client chooses (the Audit-ID request header, taken as
-- is): the webhook's entries are now identified by the digest of the event
-- as received. The entries stored before keep their audit ID as their id.
--
-- full_values: the whole values of id, user_name, name and signer (JSON)
-- when those indexed columns hold them bounded (storable.go); NULL otherwise.

-- +goose Up
ALTER TABLE ledger_entries ADD COLUMN audit_id TEXT NOT NULL DEFAULT '';
ALTER TABLE ledger_entries ADD COLUMN full_values TEXT;
UPDATE ledger_entries SET audit_id = id WHERE source = 'apiserver';

-- +goose Down
ALTER TABLE ledger_entries DROP COLUMN full_values;
ALTER TABLE ledger_entries DROP COLUMN audit_id;
