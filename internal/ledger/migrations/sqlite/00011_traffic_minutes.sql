-- Issue 46. Keep in step with ../postgres/00011_traffic_minutes.sql.
--
-- traffic_minutes: one series' second buckets of one minute packed into one
-- row (internal/ledger/traffic_slots.go): slots, a blob of the seconds that
-- had requests, each its offset in the minute and the numbers a
-- traffic_buckets row holds; buckets, how many seconds it holds (the size
-- bound and TrafficStats count buckets, not rows). The ingest still upserts
-- per-second rows into traffic_buckets; PackTraffic moves the minutes
-- behind it here (a day of a busy cluster: ~470,000 rows instead of 28
-- million), CoarsenTraffic folds them into minute buckets past a day.
-- Buckets recorded before this migration stay in traffic_buckets and are
-- packed by the first PackTraffic; the scan reads both tables meanwhile.

-- +goose Up
CREATE TABLE traffic_minutes (
    minute_s  INTEGER NOT NULL,
    series_id INTEGER NOT NULL,
    buckets   INTEGER NOT NULL,
    slots     BLOB    NOT NULL,
    PRIMARY KEY (minute_s, series_id)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE traffic_minutes;
