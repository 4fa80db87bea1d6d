-- Issue 47, item 4. Keep in step with ../postgres/00012_policy_versions.sql.
--
-- Every decision traceable to the policy text: a CSR decision whose
-- condition message carries a CSR approval policy's version
-- (csrpolicy.VersionText: "policy <name> (generation <n>, expression
-- <hash>)", written by clusterdesk approver and by a person following a
-- policy in the console) keeps it in columns of its own, parsed once at
-- ingestion (internal/ingest) from accepted, non-dry-run decisions only;
-- '' and 0 for every other entry.
--
-- A policy's page reads what each of its versions decided (policy.go,
-- PolicyVersions): the counts by an index-only scan of
-- ledger_entries_policy_counts, the latest requests of a version by
-- ledger_entries_policy, newest first. Both are partial: the entries no
-- policy decided (nearly all of them) cost nothing, and the queries say
-- "policy <> ''" so both planners see the predicate.

-- +goose Up
ALTER TABLE ledger_entries ADD COLUMN policy TEXT NOT NULL DEFAULT '';
ALTER TABLE ledger_entries ADD COLUMN policy_generation BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ledger_entries ADD COLUMN policy_hash TEXT NOT NULL DEFAULT '';
CREATE INDEX ledger_entries_policy ON ledger_entries (policy, policy_generation, policy_hash, time_ns) WHERE policy <> '';
CREATE INDEX ledger_entries_policy_counts ON ledger_entries (policy, policy_generation, policy_hash, action, uid) WHERE policy <> '';

-- +goose Down
DROP INDEX ledger_entries_policy_counts;
DROP INDEX ledger_entries_policy;
ALTER TABLE ledger_entries DROP COLUMN policy_hash;
ALTER TABLE ledger_entries DROP COLUMN policy_generation;
ALTER TABLE ledger_entries DROP COLUMN policy;
