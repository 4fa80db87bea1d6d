-- Issue 46. Keep in step with ../postgres/00007_traffic.sql.
--
-- The recorded traffic the APF what-if replays (internal/ledger/traffic.go):
-- every request the API server's audit webhook reports, folded at ingest into
-- counts per second per series (internal/traffic), never stored one by one.
--
-- traffic_series: one row per series, what APF classifies a request by (user,
-- groups, verb, API group, resource, subresource, namespace, non-resource
-- URL), its class (ordinary, watch, other long-running: the API server's
-- LongRunningRequestCheck) and the API server instance that reported it
-- (the webhook path's name, empty when unknown). key: the SHA-256 of those
-- fields (traffic_sql.go's seriesKey), so a batch finds its series by one
-- unique lookup. last_s: the end of the hour of its newest bucket, for
-- pruning (a series is upserted again once an hour, not every batch).
--
-- traffic_buckets: per series per bucket (start_s, width_s: 1 s, coarsened to
-- 60 s past a day), the requests that arrived in it, how many were refused
-- 429, their latency's sum and maximum (requestReceivedTimestamp to the
-- stage's timestamp) and the API Priority and Fairness queue wait the API
-- server annotated (apiserver.latency.k8s.io/apf-queue-wait, only on
-- requests slower than 500 ms). Keyed by time first: a window is read in
-- time order from the key, and retention deletes a range of it.

-- +goose Up
CREATE TABLE traffic_series (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key              TEXT    NOT NULL UNIQUE,
    instance         TEXT    NOT NULL,
    user_name        TEXT    NOT NULL,
    groups_json      TEXT    NOT NULL,
    verb             TEXT    NOT NULL,
    api_group        TEXT    NOT NULL,
    resource         TEXT    NOT NULL,
    subresource      TEXT    NOT NULL,
    namespace        TEXT    NOT NULL,
    non_resource_url TEXT    NOT NULL,
    class            TEXT    NOT NULL,
    last_s           INTEGER  NOT NULL
);
CREATE INDEX traffic_series_last ON traffic_series (last_s);
CREATE TABLE traffic_buckets (
    start_s     INTEGER  NOT NULL,
    series_id   INTEGER  NOT NULL,
    width_s     INTEGER NOT NULL,
    requests    INTEGER  NOT NULL,
    rejected    INTEGER  NOT NULL,
    latency_sum_ns  INTEGER NOT NULL,
    latency_max_ns  INTEGER NOT NULL,
    apf_wait_sum_ns INTEGER NOT NULL,
    PRIMARY KEY (start_s, series_id, width_s)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE traffic_buckets;
DROP TABLE traffic_series;
