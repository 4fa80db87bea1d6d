package traffic

import (
	"reflect"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

var at = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// event is a Metadata event of user's request, received at received and
// at stage after lat.
func event(stage auditv1.Stage, username, verb string, ref *auditv1.ObjectReference, received time.Time, lat time.Duration, code int32) *auditv1.Event {
	return &auditv1.Event{
		Level: auditv1.LevelMetadata, Stage: stage, Verb: verb, RequestURI: "/api/v1/namespaces/team/configmaps?limit=500",
		User:                     authnv1.UserInfo{Username: username, Groups: []string{"system:authenticated", "dev"}},
		ObjectRef:                ref,
		ResponseStatus:           &metav1.Status{Code: code},
		RequestReceivedTimestamp: metav1.NewMicroTime(received),
		StageTimestamp:           metav1.NewMicroTime(received.Add(lat)),
	}
}

var configmaps = &auditv1.ObjectReference{Resource: "configmaps", Namespace: "team", APIVersion: "v1"}

func fold(t *testing.T, instance string, evs ...*auditv1.Event) []ledger.TrafficBucket {
	t.Helper()
	b := NewBatch(instance)
	for _, ev := range evs {
		b.Add(ev, false)
	}
	return b.Buckets()
}

// TestFoldCountsPerSecondAndSeries: a batch's events of one series and
// second are one bucket (count, 429s, latency sum and maximum from the
// event's timestamps, the APF wait annotated, the served requests' latency
// sum and minimum), another second or user another bucket; the instance is
// the batch's.
func TestFoldCountsPerSecondAndSeries(t *testing.T) {
	slow := event(auditv1.StageResponseComplete, "alice", "list", configmaps, at.Add(900*time.Millisecond), 700*time.Millisecond, 200)
	slow.Annotations = map[string]string{apfQueueWait: "150ms"}
	got := fold(t, "127.0.0.2:6443",
		event(auditv1.StageResponseComplete, "alice", "list", configmaps, at.Add(100*time.Millisecond), 20*time.Millisecond, 200),
		event(auditv1.StageResponseComplete, "alice", "list", configmaps, at.Add(300*time.Millisecond), 5*time.Millisecond, 429),
		slow,
		event(auditv1.StageResponseComplete, "alice", "list", configmaps, at.Add(time.Second), time.Millisecond, 200),
		event(auditv1.StageResponseComplete, "bob", "list", configmaps, at, time.Millisecond, 200),
	)
	if len(got) != 3 {
		t.Fatalf("%d buckets, want 3: %+v", len(got), got)
	}
	a := got[0]
	want := ledger.TrafficSeries{Instance: "127.0.0.2:6443", User: "alice", Groups: []string{"dev", "system:authenticated"},
		Verb: "list", Resource: "configmaps", Namespace: "team"}
	if !reflect.DeepEqual(a.Series, want) {
		t.Errorf("series %+v, want %+v", a.Series, want)
	}
	if !a.Start.Equal(at) || a.Width != time.Second || a.Requests != 3 || a.Rejected != 1 ||
		a.LatencySum != 725*time.Millisecond || a.LatencyMax != 700*time.Millisecond || a.APFWaitSum != 150*time.Millisecond ||
		a.ServedLatencySum != 720*time.Millisecond || a.ServedLatencyMin != 20*time.Millisecond {
		t.Errorf("alice's first second: %+v", a)
	}
	if !got[1].Start.Equal(at.Add(time.Second)) || got[1].Requests != 1 || got[2].Series.User != "bob" {
		t.Errorf("next buckets: %+v", got[1:])
	}
}

// TestFoldServedLatency: the served sum and minimum leave out the 429s (a
// rejected request's latency, here the fastest of the second, would be the
// minimum otherwise), whatever the order; a second of 429s only has none
// (0), and a served request of no positive latency sets no minimum.
func TestFoldServedLatency(t *testing.T) {
	cm := func(user string, received time.Time, lat time.Duration, code int32) *auditv1.Event {
		return event(auditv1.StageResponseComplete, user, "list", configmaps, received, lat, code)
	}
	got := fold(t, "",
		cm("alice", at, 30*time.Millisecond, 200),
		cm("alice", at.Add(time.Millisecond), time.Millisecond, 429),
		cm("alice", at.Add(2*time.Millisecond), 12*time.Millisecond, 200),
		cm("alice", at.Add(time.Second), 2*time.Millisecond, 429),
		cm("bob", at, 0, 200),
		cm("bob", at, 4*time.Millisecond, 404),
	)
	if len(got) != 3 {
		t.Fatalf("%d buckets, want 3: %+v", len(got), got)
	}
	a, rejectedOnly, b := got[0], got[1], got[2]
	if a.Requests != 3 || a.Rejected != 1 || a.LatencySum != 43*time.Millisecond ||
		a.ServedLatencySum != 42*time.Millisecond || a.ServedLatencyMin != 12*time.Millisecond {
		t.Errorf("a 429 and two served: %+v, want served sum 42ms, min 12ms", a)
	}
	if rejectedOnly.Requests != 1 || rejectedOnly.ServedLatencySum != 0 || rejectedOnly.ServedLatencyMin != 0 {
		t.Errorf("429s only: %+v, want no served latency", rejectedOnly)
	}
	if b.Requests != 2 || b.ServedLatencySum != 4*time.Millisecond || b.ServedLatencyMin != 4*time.Millisecond {
		t.Errorf("a served request of no latency and a 404: %+v, want served sum and min 4ms", b)
	}
}

// TestFoldFlowKey: every field APF classifies by makes a series of its own,
// the impersonated user is the user, groups' order is not a flow, and a
// non-resource request is its path without the query.
func TestFoldFlowKey(t *testing.T) {
	base := func() *auditv1.Event {
		return event(auditv1.StageResponseComplete, "alice", "get", configmaps, at, time.Millisecond, 200)
	}
	var evs []*auditv1.Event
	evs = append(evs, base())
	reordered := base()
	reordered.User.Groups = []string{"dev", "system:authenticated", "dev"}
	evs = append(evs, reordered) // same series as the first
	for _, change := range []func(*auditv1.Event){
		func(e *auditv1.Event) { e.Verb = "list" },
		func(e *auditv1.Event) {
			e.ObjectRef = &auditv1.ObjectReference{Resource: "configmaps", Namespace: "other"}
		},
		func(e *auditv1.Event) { e.ObjectRef = &auditv1.ObjectReference{Resource: "configmaps"} }, // cluster scope
		func(e *auditv1.Event) {
			e.ObjectRef = &auditv1.ObjectReference{APIGroup: "apps", Resource: "deployments", Namespace: "team"}
		},
		func(e *auditv1.Event) {
			e.ObjectRef = &auditv1.ObjectReference{Resource: "configmaps", Subresource: "status", Namespace: "team"}
		},
		func(e *auditv1.Event) { e.User.Groups = []string{"system:authenticated"} },
		func(e *auditv1.Event) {
			e.ImpersonatedUser = &authnv1.UserInfo{Username: "carol", Groups: []string{"ops"}}
		},
		func(e *auditv1.Event) { e.ObjectRef, e.RequestURI = nil, "/healthz?verbose=1" },
	} {
		e := base()
		change(e)
		evs = append(evs, e)
	}
	got := fold(t, "", evs...)
	if len(got) != 9 {
		t.Fatalf("%d buckets, want 9 (8 changes and the base twice): %+v", len(got), got)
	}
	if got[0].Requests != 2 {
		t.Errorf("the base and its reordered groups: %d requests, want 2", got[0].Requests)
	}
	if s := got[7].Series; s.User != "carol" || !reflect.DeepEqual(s.Groups, []string{"ops"}) {
		t.Errorf("impersonated: %+v", s)
	}
	if s := got[8].Series; s.NonResourceURL != "/healthz" || s.Resource != "" {
		t.Errorf("non-resource: %+v", s)
	}
}

// TestFoldLongRunningApart: a watch is counted once, at ResponseStarted,
// its latency its start; an exec is long-running too; their
// ResponseComplete is not counted again, and an ordinary request's
// ResponseStarted (none is sent, but a policy may change) is not counted.
func TestFoldLongRunningApart(t *testing.T) {
	pods := &auditv1.ObjectReference{Resource: "pods", Namespace: "team"}
	exec := &auditv1.ObjectReference{Resource: "pods", Subresource: "exec", Namespace: "team", Name: "p"}
	got := fold(t, "",
		event(auditv1.StageResponseStarted, "alice", "watch", pods, at, 30*time.Millisecond, 200),
		event(auditv1.StageResponseComplete, "alice", "watch", pods, at, 5*time.Minute, 200),
		event(auditv1.StageResponseStarted, "alice", "create", exec, at, 10*time.Millisecond, 101),
		event(auditv1.StageResponseComplete, "alice", "create", exec, at, time.Hour, 101),
		event(auditv1.StageResponseStarted, "alice", "list", pods, at, time.Millisecond, 200),
		event(auditv1.StageResponseComplete, "alice", "list", pods, at, time.Millisecond, 200),
		event(auditv1.StageRequestReceived, "alice", "list", pods, at, 0, 0),
	)
	if len(got) != 3 {
		t.Fatalf("%d buckets, want 3: %+v", len(got), got)
	}
	for i, want := range []struct {
		class string
		lat   time.Duration
	}{{ledger.ClassWatch, 30 * time.Millisecond}, {ledger.ClassLongRunning, 10 * time.Millisecond}, {ledger.ClassOrdinary, time.Millisecond}} {
		if got[i].Series.Class != want.class || got[i].Requests != 1 || got[i].LatencySum != want.lat {
			t.Errorf("bucket %d: %+v, want class %q, 1 request of %s", i, got[i], want.class, want.lat)
		}
	}
}

// TestFoldUnauthenticatedRefusalsShareASeries: refusals to clients that did
// not authenticate are counted under one series per verb, whatever path or
// namespace they named: anybody could otherwise grow the series without end.
func TestFoldUnauthenticatedRefusalsShareASeries(t *testing.T) {
	b := NewBatch("")
	for _, uri := range []string{"/a", "/b", "/api/v1/namespaces/x/pods"} {
		ev := event(auditv1.StageResponseComplete, "system:anonymous", "get", nil, at, time.Millisecond, 403)
		ev.RequestURI = uri
		if !b.Add(ev, true) {
			t.Fatalf("refusal of %s not counted", uri)
		}
	}
	got := b.Buckets()
	if len(got) != 1 || got[0].Requests != 3 || got[0].Series.NonResourceURL != refusedURL {
		t.Errorf("refusals: %+v", got)
	}
}

// TestClassMirrorsTheAPIServersLongRunningCheck: the verbs and subresources
// kube-apiserver's LongRunningFunc names, and nothing else.
func TestClassMirrorsTheAPIServersLongRunningCheck(t *testing.T) {
	for _, c := range []struct {
		verb, sub, url string
		resource       bool
		want           string
	}{
		{"watch", "", "", true, ledger.ClassWatch},
		{"proxy", "", "", true, ledger.ClassLongRunning},
		{"get", "log", "", true, ledger.ClassLongRunning},
		{"create", "portforward", "", true, ledger.ClassLongRunning},
		{"get", "attach", "", true, ledger.ClassLongRunning},
		{"get", "status", "", true, ledger.ClassOrdinary},
		{"get", "", "/debug/pprof/profile", false, ledger.ClassLongRunning},
		{"get", "log", "/logs", false, ledger.ClassOrdinary},
		{"list", "", "", true, ledger.ClassOrdinary},
	} {
		if got := classOf(c.verb, c.sub, c.url, c.resource); got != c.want {
			t.Errorf("classOf(%q, %q, %q, %v) = %q, want %q", c.verb, c.sub, c.url, c.resource, got, c.want)
		}
	}
}
