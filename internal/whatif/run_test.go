package whatif

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func store(t testing.TB) ledger.TrafficStore {
	t.Helper()
	s, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.(ledger.TrafficStore)
}

func level(name string, shares int32, queues int32) *flowcontrolv1.PriorityLevelConfiguration {
	lr := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
		Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: min(2, queues), QueueLengthLimit: 2}}
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(shares),
				LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0), LimitResponse: lr}}}
}

func schemaFor(name, user, levelName string, precedence int32) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: levelName},
		MatchingPrecedence:         precedence,
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: user}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
				Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
		}}}}
}

// flood records 20 s of a user sending 300 requests a second that each
// take 40 ms, into a level of 3 seats (shares 1 of 200 on a 600-seat
// server), half of them refused, and a quiet user beside it.
func flood(t *testing.T, ts ledger.TrafficStore) {
	t.Helper()
	var bs []ledger.TrafficBucket
	for sec := range 20 {
		start := t0.Add(time.Duration(sec) * time.Second)
		bs = append(bs, ledger.TrafficBucket{Start: start, Width: time.Second, Requests: 300, Rejected: 220,
			Series:     ledger.TrafficSeries{Instance: "10.0.0.1:6443", User: "flooder", Groups: []string{"system:authenticated"}, Verb: "create", Resource: "configmaps", Namespace: "x"},
			LatencySum: 80 * 100 * time.Millisecond, ServedLatencySum: 80 * 100 * time.Millisecond, ServedLatencyMin: 40 * time.Millisecond},
			ledger.TrafficBucket{Start: start, Width: time.Second, Requests: 5,
				Series:     ledger.TrafficSeries{Instance: "10.0.0.1:6443", User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Resource: "pods", Namespace: "x"},
				LatencySum: 5 * 2 * time.Millisecond, ServedLatencySum: 5 * 2 * time.Millisecond, ServedLatencyMin: time.Millisecond})
	}
	if err := ts.AppendTraffic(context.Background(), bs); err != nil {
		t.Fatal(err)
	}
}

func current() Config {
	return Config{
		FlowSchemas: []*flowcontrolv1.FlowSchema{schemaFor("flood", "flooder", "flood", 500),
			schemaFor("catch-all", "alice", "catch-all", 10000)},
		Levels: []*flowcontrolv1.PriorityLevelConfiguration{level("flood", 1, 4), level("catch-all", 199, 16)},
	}
}

// TestAFlooderMovedToItsOwnLevelStopsBeingRejected: the current
// configuration predicts most of the flood refused (3 seats of 40 ms:
// 75 a second served of 300); the draft that gives the flooder a level of
// 100 shares (about 200 seats) predicts none, the flow is shown as moved,
// and every recorded request is accounted for.
func TestAFlooderMovedToItsOwnLevelStopsBeingRejected(t *testing.T) {
	ts := store(t)
	flood(t, ts)
	cur := current()
	draft := Overlay(cur, Config{
		FlowSchemas: []*flowcontrolv1.FlowSchema{schemaFor("flood", "flooder", "flooder-own", 500)},
		Levels:      []*flowcontrolv1.PriorityLevelConfiguration{level("flooder-own", 100, 4)},
	})
	var progress []float64
	res, err := Run(context.Background(), Input{Traffic: ts, Since: t0, Until: t0.Add(time.Minute), Current: cur, Draft: &draft,
		Progress: func(f float64) { progress = append(progress, f) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 20*305 || len(res.Instances) != 1 || res.Instances[0] != "10.0.0.1:6443" {
		t.Fatalf("read %d requests of %v", res.Requests, res.Instances)
	}
	fl, _ := res.Current.Level("flood")
	if fl.NominalCL != 3 || fl.Predicted.Arrived != 6000 || fl.RecordedRejected != 4400 {
		t.Fatalf("current flood level %+v", fl)
	}
	t.Logf("current: flood level %+v; took %v", fl.Predicted, res.Elapsed)
	// 3 seats × 25 a second, 20 s: about 1,500 served, 4,500 refused.
	if r := fl.Predicted.Rejected(); r < 4000 || r > 4700 {
		t.Errorf("current configuration predicts %d rejections of 6,000 (%+v)", r, fl.Predicted)
	}
	own, ok := res.Draft.Level("flooder-own")
	if !ok || own.Predicted.Arrived != 6000 || own.Predicted.Rejected() != 0 {
		t.Errorf("draft's own level %+v", own)
	}
	if dfl, _ := res.Draft.Level("flood"); dfl.Predicted.Arrived != 0 {
		t.Errorf("the draft still sends %d requests to the old level", dfl.Predicted.Arrived)
	}
	var moved, alice int
	for _, f := range res.Flows {
		switch f.Series.User {
		case "flooder":
			if !f.Moved() || f.Current.Level != "flood" || f.Draft.Level != "flooder-own" || f.RecordedRejected != 4400 {
				t.Errorf("flooder's flow %+v", f)
			}
			moved++
		case "alice":
			if f.Moved() || f.Current.Predicted.Rejected() != 0 || f.Current.Predicted.Dispatched != 100 {
				t.Errorf("alice's flow %+v", f)
			}
			alice++
		}
	}
	if moved != 1 || alice != 1 {
		t.Errorf("%d flows: %+v", len(res.Flows), res.Flows)
	}
	if len(progress) == 0 || progress[len(progress)-1] != 1 {
		t.Errorf("progress %v", progress)
	}
}

func TestBadDraftsAreRefusedBeforeAnyRun(t *testing.T) {
	ts := store(t)
	cur := current()
	missing := Overlay(cur, Config{FlowSchemas: []*flowcontrolv1.FlowSchema{schemaFor("flood", "flooder", "nowhere", 500)}})
	bad := level("bad", 5, 4)
	bad.Spec.Limited.LimitResponse.Queuing.HandSize = 9
	badQueues := Overlay(cur, Config{Levels: []*flowcontrolv1.PriorityLevelConfiguration{bad}})
	negative := level("neg", -1, 4)
	badShares := Overlay(cur, Config{Levels: []*flowcontrolv1.PriorityLevelConfiguration{negative}})
	for _, c := range []struct {
		draft Config
		want  string
	}{{missing, `names priority level "nowhere"`}, {badQueues, "hand size 9"}, {badShares, "shares -1"}} {
		_, err := Run(context.Background(), Input{Traffic: ts, Since: t0, Until: t0.Add(time.Minute), Current: cur, Draft: &c.draft})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "the draft:") {
			t.Errorf("draft error %v, want one about %q", err, c.want)
		}
	}
	if _, err := Run(context.Background(), Input{Traffic: ts, Since: t0, Until: t0, Current: cur}); err == nil {
		t.Error("an empty window ran")
	}
	// A live configuration with a dangling FlowSchema runs (the API server
	// skips it), and a draft that leaves it dangling is not refused for it.
	dangling := current()
	dangling.FlowSchemas = append(dangling.FlowSchemas, schemaFor("ghost", "ghost", "nowhere", 100))
	same := Overlay(dangling, Config{Levels: []*flowcontrolv1.PriorityLevelConfiguration{level("extra", 5, 4)}})
	if _, err := Run(context.Background(), Input{Traffic: ts, Since: t0, Until: t0.Add(time.Minute), Current: dangling, Draft: &same}); err != nil {
		t.Errorf("a configuration with a dangling FlowSchema: %v", err)
	}
}

// TestTrafficOfNoNamedInstanceIsSplit: with the audit webhook's path naming
// no API server, the flood is dealt evenly over the three instances the
// cluster lists, each simulated with its own limits, and the page can say
// the split is estimated.
func TestTrafficOfNoNamedInstanceIsSplit(t *testing.T) {
	ts := store(t)
	var bs []ledger.TrafficBucket
	for sec := range 10 {
		bs = append(bs, ledger.TrafficBucket{Start: t0.Add(time.Duration(sec) * time.Second), Width: time.Second, Requests: 300,
			Series:           ledger.TrafficSeries{User: "flooder", Groups: []string{"system:authenticated"}, Verb: "get", Resource: "pods"},
			ServedLatencySum: 300 * 40 * time.Millisecond})
	}
	if err := ts.AppendTraffic(context.Background(), bs); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Input{Traffic: ts, Since: t0, Until: t0.Add(time.Minute), Current: current(), UnnamedSplit: 3})
	if err != nil {
		t.Fatal(err)
	}
	fl, _ := res.Current.Level("flood")
	if len(res.Instances) != 3 || !strings.HasPrefix(res.Instances[0], UnnamedPrefix) || len(fl.Instances) != 3 {
		t.Fatalf("instances %v, level parts %+v", res.Instances, fl.Instances)
	}
	for _, il := range fl.Instances {
		if il.Predicted.Arrived != 1000 || il.NominalCL != 3 {
			t.Errorf("%s got %+v of the 3,000 requests (nominal %d)", il.Instance, il.Predicted, il.NominalCL)
		}
	}
}

// TestAListWeighsItsResourcesObjects: LISTs of CRDs (152 of megabyte
// schemas) weigh what the API server's estimator gives them when the
// objects are known: 10 seats, capped by the level's max seats (5 for a
// 29-seat level with a hand of 2), and more are refused than when each
// weighed one seat.
func TestAListWeighsItsResourcesObjects(t *testing.T) {
	ts := store(t)
	var bs []ledger.TrafficBucket
	for sec := range 10 {
		bs = append(bs, ledger.TrafficBucket{Start: t0.Add(time.Duration(sec) * time.Second), Width: time.Second, Requests: 1000, Rejected: 400,
			Series:           ledger.TrafficSeries{Instance: "10.0.0.1:6443", User: "flooder", Groups: []string{"system:authenticated"}, Verb: "list", APIGroup: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
			ServedLatencySum: 600 * 50 * time.Millisecond, ServedLatencyMin: 50 * time.Millisecond})
	}
	if err := ts.AppendTraffic(context.Background(), bs); err != nil {
		t.Fatal(err)
	}
	cfg := current()
	cfg.Levels[0] = level("flood", 10, 4)
	run := func(objects func(group, resource string) (int64, int64, bool)) (Flow, Level) {
		res, err := Run(context.Background(), Input{Traffic: ts, Since: t0, Until: t0.Add(time.Minute), Current: cfg, Objects: objects})
		if err != nil {
			t.Fatal(err)
		}
		l, _ := res.Current.Level("flood")
		return res.Flows[0], l
	}
	known := func(group, resource string) (int64, int64, bool) {
		if group == "apiextensions.k8s.io" && resource == "customresourcedefinitions" {
			return 152, 15_374_344, true
		}
		return 0, 0, false
	}
	wide, wideLevel := run(known)
	narrow, narrowLevel := run(nil)
	if wide.Current.Seats != 5 || narrow.Current.Seats != 1 {
		t.Fatalf("seats %d known, %d unknown", wide.Current.Seats, narrow.Current.Seats)
	}
	t.Logf("5-seat LISTs: %+v; 1-seat: %+v", wideLevel.Predicted, narrowLevel.Predicted)
	if wideLevel.Predicted.Rejected() <= narrowLevel.Predicted.Rejected() {
		t.Errorf("10-seat LISTs: %+v; 1-seat: %+v", wideLevel.Predicted, narrowLevel.Predicted)
	}
}
