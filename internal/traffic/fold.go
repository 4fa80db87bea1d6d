package traffic

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// apfQueueWait is the annotation the API server writes with the time a
// request waited in its APF queue, on requests slower than 500 ms only
// (writeLatencyToAnnotation, k8s.io/apiserver/pkg/endpoints/filters/audit.go;
// the key in pkg/endpoints/request/webhook_duration.go). No annotation names
// the FlowSchema or priority level a request used (kubernetes#113473): the
// what-if classifies the series with the console's classifier instead.
const apfQueueWait = "apiserver.latency.k8s.io/apf-queue-wait"

// refusedURL stands for the path of every request refused to a client that
// did not authenticate: anybody can send those, with any path or
// namespace, and each distinct one would be a series (rows nobody
// accountable pays for). They are counted, under one series per verb.
const refusedURL = "(refused, unauthenticated)"

// Batch folds one webhook batch's events into buckets: one per series and
// second, whatever the number of events.
type Batch struct {
	instance string
	buckets  map[string]*ledger.TrafficBucket
	order    []string
}

// NewBatch starts a batch from the API server instance that sent it (empty
// when unknown).
func NewBatch(instance string) *Batch {
	return &Batch{instance: instance, buckets: map[string]*ledger.TrafficBucket{}}
}

// Add counts ev once per request, reporting whether it did: an ordinary
// request at its ResponseComplete (or Panic) event, a long-running one at
// its ResponseStarted (the API server sends exactly one for each, faked when
// nothing was written: WithAudit in
// k8s.io/apiserver/pkg/endpoints/filters/audit.go), so that a watch is
// counted when it arrives and its latency is its initialisation, what APF
// charges it for. Every other stage is left out. unauthenticatedRefusal is
// the receiver's verdict that ev is a request refused to a client that did
// not authenticate (refusedURL).
func (b *Batch) Add(ev *auditv1.Event, unauthenticatedRefusal bool) bool {
	s, ok := seriesOf(ev, unauthenticatedRefusal)
	if !ok {
		return false
	}
	switch {
	case s.Class == ledger.ClassOrdinary && (ev.Stage == auditv1.StageResponseComplete || ev.Stage == auditv1.StagePanic):
	case s.Class != ledger.ClassOrdinary && ev.Stage == auditv1.StageResponseStarted:
	default:
		return false
	}
	s.Instance = b.instance
	received := ev.RequestReceivedTimestamp.Time
	if received.IsZero() {
		return false
	}
	start := received.Truncate(time.Second).UTC()
	key := strconv.FormatInt(start.Unix(), 10) + " " + seriesID(&s)
	bk := b.buckets[key]
	if bk == nil {
		bk = &ledger.TrafficBucket{Start: start, Width: ledger.TrafficSecond, Series: s}
		b.buckets[key] = bk
		b.order = append(b.order, key)
	}
	bk.Requests++
	rejected := ev.ResponseStatus != nil && ev.ResponseStatus.Code == http.StatusTooManyRequests
	if rejected {
		bk.Rejected++
	}
	// The event's own timestamps, microseconds: a clock skew between the
	// stages is impossible (one process), a negative span is not a latency.
	if lat := ev.StageTimestamp.Sub(received); lat > 0 {
		bk.LatencySum += lat
		bk.LatencyMax = max(bk.LatencyMax, lat)
		// A 429 held no seat: the served ones are the service-time
		// estimate's (ledger.TrafficBucket); a minimum of 0 is none yet.
		if !rejected {
			bk.ServedLatencySum += lat
			if bk.ServedLatencyMin == 0 || lat < bk.ServedLatencyMin {
				bk.ServedLatencyMin = lat
			}
		}
	}
	if w, err := time.ParseDuration(ev.Annotations[apfQueueWait]); err == nil && w > 0 {
		bk.APFWaitSum += w
	}
	return true
}

// Buckets returns the batch's buckets in the order their first event came.
func (b *Batch) Buckets() []ledger.TrafficBucket {
	out := make([]ledger.TrafficBucket, 0, len(b.order))
	for _, k := range b.order {
		out = append(out, *b.buckets[k])
	}
	return out
}

// seriesOf is what APF classifies ev's request by. The user is the
// impersonated one when the request impersonated: APF runs after the
// impersonation filter (DefaultBuildHandlerChain,
// k8s.io/apiserver/pkg/server/config.go: authentication, audit,
// impersonation, priority and fairness, authorization, outside in). Groups
// are sorted: APF matches membership, so their order is no flow of its own.
func seriesOf(ev *auditv1.Event, unauthenticatedRefusal bool) (ledger.TrafficSeries, bool) {
	if ev.Verb == "" {
		return ledger.TrafficSeries{}, false
	}
	u := ev.User
	if imp := ev.ImpersonatedUser; imp != nil && imp.Username != "" {
		u = *imp
	}
	s := ledger.TrafficSeries{User: u.Username, Groups: slices.Clone(u.Groups), Verb: ev.Verb}
	slices.Sort(s.Groups)
	s.Groups = slices.Compact(s.Groups)
	ref := ev.ObjectRef
	resourceRequest := ref != nil && ref.Resource != ""
	if resourceRequest {
		s.APIGroup, s.Resource, s.Subresource, s.Namespace = ref.APIGroup, ref.Resource, ref.Subresource, ref.Namespace
	} else {
		s.NonResourceURL = pathOf(ev.RequestURI)
	}
	s.Class = classOf(s.Verb, s.Subresource, s.NonResourceURL, resourceRequest)
	if unauthenticatedRefusal {
		s = ledger.TrafficSeries{User: user.Anonymous, Groups: []string{user.AllUnauthenticated}, Verb: s.Verb,
			NonResourceURL: refusedURL, Class: s.Class}
	}
	return s, true
}

// pathOf is a request URI's path, as APF matches non-resource URLs.
func pathOf(uri string) string {
	if u, err := url.ParseRequestURI(uri); err == nil {
		return u.Path
	}
	path, _, _ := strings.Cut(uri, "?")
	return path
}

// seriesID is a series' identity within a batch: its fields, each
// length-prefixed so that no two series share one.
func seriesID(s *ledger.TrafficSeries) string {
	var b strings.Builder
	field := func(v string) {
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	for _, v := range []string{s.Instance, s.User, s.Verb, s.APIGroup, s.Resource, s.Subresource, s.Namespace, s.NonResourceURL, s.Class} {
		field(v)
	}
	for _, g := range s.Groups {
		field(g)
	}
	return b.String()
}
