-- Issue 46. Keep in step with ../postgres/00009_traffic_served_latency.sql.
--
-- served_latency_sum_ns, served_latency_min_ns: the latency's sum and
-- minimum over the bucket's served requests only (any code but 429), the APF
-- what-if's service-time estimate (internal/ledger/traffic.go's
-- TrafficBucket): latency_sum_ns mixes in the 429s, answered at once, and a
-- served request's latency includes its APF queue wait. The minimum is 0 when
-- no served request had a positive latency; an upsert or the coarsening into
-- minutes keeps the smallest positive one. Both 0 in buckets recorded before
-- this column.

-- +goose Up
ALTER TABLE traffic_buckets ADD COLUMN served_latency_sum_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE traffic_buckets ADD COLUMN served_latency_min_ns INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE traffic_buckets DROP COLUMN served_latency_min_ns;
ALTER TABLE traffic_buckets DROP COLUMN served_latency_sum_ns;
