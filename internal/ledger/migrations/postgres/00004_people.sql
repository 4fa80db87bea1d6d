-- Issue 44. Keep in step with ../sqlite/00004_people.sql.
--
-- The ledger's list folds the control plane's housekeeping by default. A
-- ledger of a running cluster is mostly that (status writes to CRDs and flow
-- schemas, all day), so walking the time index and skipping it would read
-- the whole ledger to find one page of people's writes. This partial index
-- holds only the other entries, in page order (PostgreSQL: time_ns, seq, as
-- its 00001 indexes). Its WHERE is
-- NOT (HousekeepingSQL) of housekeeping.go, word for word: both planners use
-- a partial index only for a query whose WHERE holds the same text
-- (TestHousekeepingIndexMatchesTheDefinition compares them).

-- +goose Up
CREATE INDEX ledger_entries_people ON ledger_entries (time_ns, seq) WHERE NOT (source = 'apiserver' AND result = 'ok' AND action IN ('status', 'update') AND kind <> 'csrs' AND impersonator = '' AND (user_name IN ('system:apiserver', 'system:kube-controller-manager', 'system:kube-scheduler') OR substr(user_name, 1, 34) = 'system:serviceaccount:kube-system:'));

-- +goose Down
DROP INDEX ledger_entries_people;
