-- Issue 46. Keep in step with ../sqlite/00010_traffic_rejections.sql.
--
-- traffic_rejections: the requests the API server answered 429 per minute
-- (minute_s: the minute's first second), added to by each batch of recorded
-- traffic that had any, pruned with the buckets. The what-if page lists the
-- recorded incidents from it (runs of minutes with rejections) without
-- scanning the buckets, tens of millions a day.

-- +goose Up
CREATE TABLE traffic_rejections (
    minute_s BIGINT NOT NULL PRIMARY KEY,
    rejected BIGINT NOT NULL
);

-- +goose Down
DROP TABLE traffic_rejections;
