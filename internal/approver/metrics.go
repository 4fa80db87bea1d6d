package approver

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// The bounds of the metrics' free labels (see boundedLabels).
const (
	maxPolicyLabels = 100
	maxSignerLabels = 50
)

// The kinds of errors the approver counts.
const (
	ErrForbidden  = "forbidden"  // the API server refused the decision (403): a signer not granted
	ErrConflict   = "conflict"   // the request changed since the cache read it: re-evaluated
	ErrWrite      = "write"      // any other failed decision
	ErrEvaluation = "evaluation" // a policy could not run on a request
	ErrPolicy     = "policy"     // a policy object does not compile or read
	ErrThrottled  = "throttled"  // the API server answered 429: the request waits for its Retry-After
)

// Why a request a policy names is left to people (the undecided counter's reason).
const (
	UndecidedConflict = "conflict" // the policies that match disagree
	UndecidedError    = "error"    // a policy could not run on the request
	UndecidedBroken   = "broken"   // a policy naming its signer cannot run at all
	UndecidedHeld     = "held"     // the approving policy's rate limit holds it until its window frees
)

// Metrics are the approver's Prometheus metrics, in a registry of their own.
type Metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	undecided *prometheus.CounterVec
	// superseded counts older duplicates denied with reason Superseded
	// (also in decisions, as denials of their policy).
	superseded prometheus.Counter
	errors     *prometheus.CounterVec
	leader     prometheus.Gauge
	broken     prometheus.GaugeFunc
	// brokenPolicies counts the policies that cannot run (Policies.Broken),
	// set once before the first scrape; nil: none.
	brokenPolicies func() int
	// byReason counts the pending requests by their last reason
	// (Controller.pendingByReason), set once before the first scrape.
	byReason func() map[csrwhy.Code]int
	policies *boundedLabels
	signers  *boundedLabels
}

// NewMetrics registers the approver's metrics. pending lists the requests
// for the pending gauges, read at each scrape; signers is the set of signers
// the running policies name, whose requests get a label of their own.
func NewMetrics(pending func() ([]*certificatesv1.CertificateSigningRequest, error), signers func() map[string]bool) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clusterdesk_approver_decisions_total",
			Help: "Requests the approver decided (dry_run: would have decided), by policy and verdict (approve, deny).",
		}, []string{"policy", "verdict", "dry_run"}),
		undecided: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clusterdesk_approver_undecided_total",
			Help: "Requests a policy named but the approver left pending: conflict (matching policies disagree), error (a policy could not run on the request), broken (a policy naming its signer cannot run at all) or held (the approving policy's rate limit; tried again when its window frees). Once per request and outcome.",
		}, []string{"reason"}),
		superseded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clusterdesk_approver_superseded_total",
			Help: "Older pending duplicates (same requester, signer, subject and usages) denied with reason Superseded when a supersedeDuplicates policy approved a newer one.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clusterdesk_approver_errors_total",
			Help: "Errors by kind: forbidden (a decision refused with 403), conflict (the request changed; re-evaluated), throttled (429: the request waits for its Retry-After, the others go on), write, evaluation, policy.",
		}, []string{"kind"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clusterdesk_approver_is_leader",
			Help: "1 while this replica holds the approver's Lease and decides, else 0.",
		}),
		policies: newBoundedLabels(maxPolicyLabels),
		signers:  newBoundedLabels(maxSignerLabels),
	}
	m.broken = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "clusterdesk_approver_broken_policies",
		Help: "Policies the approver selects that cannot run (a field it cannot read, CEL that does not compile): nothing is decided for the signers they name, nor for any signer while one's signers cannot be read.",
	}, func() float64 {
		if m.brokenPolicies == nil {
			return 0
		}
		return float64(m.brokenPolicies())
	})
	for _, k := range []string{ErrForbidden, ErrConflict, ErrThrottled, ErrWrite, ErrEvaluation, ErrPolicy} {
		m.errors.WithLabelValues(k)
	}
	m.reg.MustRegister(m.decisions, m.undecided, m.superseded, m.errors, m.leader, m.broken,
		&pendingCollector{list: pending, signers: signers, label: m.signerLabel}, &reasonCollector{m: m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Gatherer is the registry, for tests.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

func (m *Metrics) decided(policy string, d csrpolicy.Decision, dryRun bool) {
	verdict := "approve"
	if d == csrpolicy.Deny {
		verdict = "deny"
	}
	m.decisions.WithLabelValues(m.policies.Label(policy), verdict, strconv.FormatBool(dryRun)).Inc()
}

func (m *Metrics) error(kind string) { m.errors.WithLabelValues(kind).Inc() }

func (m *Metrics) setLeader(on bool) {
	if on {
		m.leader.Set(1)
	} else {
		m.leader.Set(0)
	}
}

// signerLabel is the signer when a running policy names it (exactly or by
// its domain) or Kubernetes defines it, within the bound, else OtherLabel:
// requesters choose signer names, admins choose what policies name.
func (m *Metrics) signerLabel(signer string, named map[string]bool) string {
	domain, _, _ := strings.Cut(signer, "/")
	if !named[signer] && !named[domain+"/*"] && domain != "kubernetes.io" {
		return OtherLabel
	}
	return m.signers.Label(signer)
}

// pendingCollector reports, at each scrape, the pending requests and the age
// of the oldest per signer label, from the informer's cache (no API call).
type pendingCollector struct {
	list    func() ([]*certificatesv1.CertificateSigningRequest, error)
	signers func() map[string]bool
	label   func(signer string, named map[string]bool) string
}

var (
	pendingDesc = prometheus.NewDesc("clusterdesk_approver_pending_requests",
		"Pending requests (neither approved nor denied) in the approver's cache, by signer (signers no policy names and Kubernetes does not define are \"other\").", []string{"signer"}, nil)
	oldestDesc = prometheus.NewDesc("clusterdesk_approver_oldest_pending_seconds",
		"Age of the oldest pending request, by signer.", []string{"signer"}, nil)
)

func (p *pendingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- oldestDesc
}

func (p *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	csrs, err := p.list()
	if err != nil {
		return
	}
	named := p.signers()
	count, oldest := map[string]int{}, map[string]time.Time{}
	for _, c := range csrs {
		if csrpolicy.DecisionOf(c) != "" {
			continue
		}
		l := p.label(c.Spec.SignerName, named)
		count[l]++
		if t := c.CreationTimestamp.Time; oldest[l].IsZero() || t.Before(oldest[l]) {
			oldest[l] = t
		}
	}
	now := time.Now()
	for l, n := range count {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n), l)
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, now.Sub(oldest[l]).Seconds(), l)
	}
}

// reasonCollector reports, at each scrape, the pending requests this replica
// evaluated by why they are pending (csrwhy's codes: a bounded label, every
// code reported, 0 included, so a query for one never finds nothing).
type reasonCollector struct{ m *Metrics }

var reasonDesc = prometheus.NewDesc("clusterdesk_approver_pending_by_reason",
	"Pending requests the leading approver evaluated, by why no automation decided them (internal/csrwhy's codes: NoPolicy, NotForRequester, Superseded, PolicyError, Conflict, NodeMissing, ClauseFalse, Forbidden, RateLimited, DryRun, Deciding...). A standby reports what it saw while it last led.",
	[]string{"reason"}, nil)

func (r *reasonCollector) Describe(ch chan<- *prometheus.Desc) { ch <- reasonDesc }

func (r *reasonCollector) Collect(ch chan<- prometheus.Metric) {
	if r.m.byReason == nil {
		return
	}
	for code, n := range r.m.byReason() {
		ch <- prometheus.MustNewConstMetric(reasonDesc, prometheus.GaugeValue, float64(n), string(code))
	}
}
