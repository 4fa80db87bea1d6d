-- A user's entries of one action (the auditor's "what did this user
-- approve?"): without it the page reads every entry of the user in the window
-- when the action is rare (175 ms for a week of a kubelet storm's user at
-- 1,000,000 entries). Keep in step with ../sqlite/00002_user_action.sql.

-- +goose Up
CREATE INDEX ledger_entries_user_action ON ledger_entries (user_name, action, time_ns, seq);

-- +goose Down
DROP INDEX ledger_entries_user_action;
