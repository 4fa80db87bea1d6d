package apfflood

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// Level is one priority level's counters on one instance, as its /metrics
// has them (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/metrics/metrics.go).
type Level struct {
	// NominalSeats is apiserver_flowcontrol_nominal_limit_seats:
	// ceil(serverCL * shares / sum of every level's shares)
	// (apf_controller.go); serverCL is --max-requests-inflight +
	// --max-mutating-requests-inflight (600 by default), not the sum of the
	// levels' nominal seats, which the rounding up makes larger.
	// LowerSeats and UpperSeats are its lower and upper limit (lending,
	// borrowing).
	NominalSeats, LowerSeats, UpperSeats float64
	// Dispatched is apiserver_flowcontrol_dispatched_requests_total, summed
	// over FlowSchemas.
	Dispatched float64
	// Rejected is apiserver_flowcontrol_rejected_requests_total summed over
	// FlowSchemas and reasons; RejectedBy by reason (queue-full,
	// concurrency-limit, time-out, cancelled).
	Rejected   float64
	RejectedBy map[string]float64
	// Seats and SeatsCount are the sum and count of
	// apiserver_flowcontrol_work_estimated_seats (each dispatched or
	// rejected request's estimated width, max of initial and final seats);
	// WatchCount and WatchCountSamples those of
	// apiserver_flowcontrol_watch_count_samples (mutating requests' count of
	// interested watches).
	Seats, SeatsCount             float64
	WatchCount, WatchCountSamples float64
}

// Counters is one read of one instance's /metrics.
type Counters struct {
	Instance string
	// StartTime is the process's start (process_start_time_seconds): the
	// counters of two reads with different ones are not comparable.
	StartTime float64
	Levels    map[string]Level
}

// Metrics reads instance target's /metrics as the devcluster's admin, the
// way the console's sampler reads each instance (internal/kube
// APIServerMetrics, internal/apfload Parse).
func Metrics(t testing.TB, target testcluster.APIServer) Counters {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cfg.Host = target.Server
	open, err := kube.APIServerMetrics(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, err := open(context.Background())
	if err != nil {
		t.Fatalf("%s/metrics: %v", target.Server, err)
	}
	defer body.Close()
	raw, err := io.ReadAll(io.LimitReader(body, apfload.DefaultLimits.MaxBodyBytes))
	if err != nil {
		t.Fatalf("%s/metrics: %v", target.Server, err)
	}
	tot, err := apfload.Parse(bytes.NewReader(raw), apfload.DefaultLimits)
	if err != nil {
		t.Fatalf("%s/metrics: %v", target.Server, err)
	}
	c := Counters{Instance: Instance(target), StartTime: tot.StartTime, Levels: map[string]Level{}}
	for name, l := range tot.Levels {
		lv := Level{
			NominalSeats: l.NominalSeats, LowerSeats: l.LowerSeats, UpperSeats: l.UpperSeats,
			Dispatched: l.Dispatched, RejectedBy: map[string]float64{},
		}
		for reason, n := range l.Rejected {
			lv.Rejected += n
			lv.RejectedBy[reason] = n
		}
		c.Levels[name] = lv
	}
	histograms(t, raw, c.Levels)
	return c
}

// Histogram sums and counts Level keeps, by series name.
var histogramFields = map[string]func(*Level) *float64{
	"apiserver_flowcontrol_work_estimated_seats_sum":   func(l *Level) *float64 { return &l.Seats },
	"apiserver_flowcontrol_work_estimated_seats_count": func(l *Level) *float64 { return &l.SeatsCount },
	"apiserver_flowcontrol_watch_count_samples_sum":    func(l *Level) *float64 { return &l.WatchCount },
	"apiserver_flowcontrol_watch_count_samples_count":  func(l *Level) *float64 { return &l.WatchCountSamples },
}

// histograms adds the _sum and _count samples of the histograms
// histogramFields names to levels: only those lines are parsed (without
// their # TYPE line, so as untyped samples).
func histograms(t testing.TB, raw []byte, levels map[string]Level) {
	t.Helper()
	var kept bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, apfload.DefaultLimits.MaxLineBytes)
	for sc.Scan() {
		line := sc.Bytes()
		if end := bytes.IndexAny(line, "{ "); end > 0 && histogramFields[string(line[:end])] != nil {
			kept.Write(line)
			kept.WriteByte('\n')
		}
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(&kept)
	if err != nil {
		t.Fatalf("parse APF histograms: %v", err)
	}
	for name, fam := range families {
		for _, m := range fam.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() != "priority_level" {
					continue
				}
				l := levels[lp.GetValue()]
				*histogramFields[name](&l) += m.GetUntyped().GetValue()
				levels[lp.GetValue()] = l
			}
		}
	}
}

// Since is c's counters less those of the earlier read prev (the
// gauges, nominal, lower and upper seats, are c's): what the instance
// counted between the reads. A restart between them fails the test.
func (c Counters) Since(t testing.TB, prev Counters) Counters {
	t.Helper()
	if c.Instance != prev.Instance || c.StartTime != prev.StartTime {
		t.Fatalf("counters of %s (started %v) and %s (started %v) are not comparable", c.Instance, c.StartTime, prev.Instance, prev.StartTime)
	}
	out := Counters{Instance: c.Instance, StartTime: c.StartTime, Levels: map[string]Level{}}
	for name, l := range c.Levels {
		p := prev.Levels[name]
		d := l
		d.Dispatched -= p.Dispatched
		d.Rejected -= p.Rejected
		d.RejectedBy = map[string]float64{}
		for reason, n := range l.RejectedBy {
			if n -= p.RejectedBy[reason]; n != 0 {
				d.RejectedBy[reason] = n
			}
		}
		d.Seats -= p.Seats
		d.SeatsCount -= p.SeatsCount
		d.WatchCount -= p.WatchCount
		d.WatchCountSamples -= p.WatchCountSamples
		out.Levels[name] = d
	}
	return out
}
