package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// trafficConfig bounds the recorded traffic (issue 46): the requests the
// audit webhook reports, folded per second and series.
type trafficConfig struct {
	retention                     time.Duration
	maxBuckets                    int64
	retentionText, maxBucketsText string
}

func (c *trafficConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.retentionText, "recorded-traffic-retention", env("RECORDED_TRAFFIC_RETENTION", ledger.DefaultTrafficRetention.String()), "how long the traffic the audit webhook reports (per second per flow, a minute past a day) is kept for the APF what-if; 0 keeps it forever")
	fs.StringVar(&c.maxBucketsText, "recorded-traffic-max-buckets", env("RECORDED_TRAFFIC_MAX_BUCKETS", strconv.Itoa(ledger.DefaultMaxTrafficBuckets)), "how many buckets (a flow's requests in one second or minute) of recorded traffic are kept at most: past it the oldest are pruned as traffic comes in; 0 for no bound")
}

func (c *trafficConfig) finish() error {
	var err error
	if c.retention, err = time.ParseDuration(c.retentionText); err != nil || c.retention < 0 {
		return fmt.Errorf("--recorded-traffic-retention (CLUSTERDESK_RECORDED_TRAFFIC_RETENTION) must be a duration such as 168h, or 0 for ever, not %q", c.retentionText)
	}
	if c.maxBuckets, err = strconv.ParseInt(c.maxBucketsText, 10, 64); err != nil || c.maxBuckets < 0 {
		return fmt.Errorf("--recorded-traffic-max-buckets (CLUSTERDESK_RECORDED_TRAFFIC_MAX_BUCKETS) must be a count of buckets, or 0 for no bound, not %q", c.maxBucketsText)
	}
	return nil
}

// keepTraffic folds the traffic's seconds older than a day into minutes and
// prunes what is older than the retention, at start and then hourly.
func keepTraffic(ctx context.Context, traffic ledger.TrafficStore, retention time.Duration, log *slog.Logger) {
	hourly(ctx, func(ctx context.Context) {
		n, err := traffic.CoarsenTraffic(ctx, time.Now().Add(-ledger.DefaultTrafficFineFor))
		if err != nil && ctx.Err() == nil {
			log.Warn("ledger: folding recorded traffic into minutes failed; tried again in an hour", "err", err)
		} else if n > 0 {
			log.Info("ledger: folded recorded traffic past a day into minutes", "buckets", n)
		}
		if retention == 0 {
			return
		}
		n, err = traffic.PruneTraffic(ctx, time.Now().Add(-retention))
		if err != nil && ctx.Err() == nil {
			log.Warn("ledger: pruning recorded traffic failed; tried again in an hour", "err", err)
		} else if n > 0 {
			log.Info("ledger: pruned recorded traffic past its retention", "buckets", n, "retention", retention)
		}
	})
}

// packTraffic packs the traffic's seconds into a row per series and
// minute (ledger.TrafficStore.PackTraffic) once their minute is
// ledger.DefaultTrafficPackAfter old, every minute: the what-if reads a
// day ~60 times fewer rows. What is not packed yet is read all the same.
func packTraffic(ctx context.Context, traffic ledger.TrafficStore, log *slog.Logger) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		jctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		if _, err := traffic.PackTraffic(jctx, time.Now().Add(-ledger.DefaultTrafficPackAfter)); err != nil && ctx.Err() == nil {
			log.Warn("ledger: packing recorded traffic into minutes failed; tried again in a minute", "err", err)
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
