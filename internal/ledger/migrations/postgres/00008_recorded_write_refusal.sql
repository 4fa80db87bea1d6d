-- Issue 45. Keep in step with ../sqlite/00008_recorded_write_refusal.sql.
-- (00007 is issue 46's recorded traffic.)
--
-- refusal: the API server's message when it refused the write (code 400 or
-- more), bounded; '' for an accepted write and for writes recorded before
-- this column. The replay reads it to tell a write the API server refused
-- before validating admission (the object's own validation, a 422 naming no
-- policy or webhook) from one a policy or webhook refused.

-- +goose Up
ALTER TABLE recorded_writes ADD COLUMN refusal TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE recorded_writes DROP COLUMN refusal;
