package approver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// storeDecider stands for the API server: each decision is stored in the
// cache at once (writeBack) or not (the informer's event late), and recorded.
type storeDecider struct {
	mu        sync.Mutex
	idx       cache.Indexer
	writeBack bool
	decided   []certificatesv1.CertificateSigningRequestCondition
	names     []string
}

func (d *storeDecider) Decide(_ context.Context, c *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict) (*certificatesv1.CertificateSigningRequest, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c = c.DeepCopy()
	cond := Condition(v)
	c.Status.Conditions = append(c.Status.Conditions, cond)
	d.decided, d.names = append(d.decided, cond), append(d.names, c.Name)
	if d.writeBack {
		if err := d.idx.Update(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// stormWorld is a controller over requests, under one Approve policy for
// kubelet-serving with the spec fields extra (rateLimit, supersedeDuplicates).
func stormWorld(t *testing.T, extra map[string]any, now time.Time, reqs ...*certificatesv1.CertificateSigningRequest) (*Controller, *storeDecider) {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{requesterIndex: func(obj any) ([]string, error) {
		return []string{obj.(*certificatesv1.CertificateSigningRequest).Spec.Username}, nil
	}})
	for _, r := range reqs {
		if err := idx.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	pol := policyObject("approve-nodes", certificatesv1.KubeletServingSignerName, "Approve", `request.username == request.subject.commonName`)
	for k, v := range extra {
		pol.Object["spec"].(map[string]any)[k] = v
	}
	p := NewPolicies(func() ([]*unstructured.Unstructured, error) { return []*unstructured.Unstructured{pol}, nil },
		slog.New(slog.NewTextHandler(io.Discard, nil)), func(name string, err error) { t.Fatalf("policy %s: %v", name, err) })
	d := &storeDecider{idx: idx}
	return NewController(Options{
		CSRs: certlisters.NewCertificateSigningRequestLister(idx), Policies: p, Decider: d,
		Metrics: NewMetrics(noPending, noSigners), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return now },
		Requests: func(u string) []*certificatesv1.CertificateSigningRequest {
			objs, _ := idx.ByIndex(requesterIndex, u)
			out := make([]*certificatesv1.CertificateSigningRequest, len(objs))
			for i, o := range objs {
				out[i] = o.(*certificatesv1.CertificateSigningRequest)
			}
			return out
		},
	}), d
}

// nodeRequest is node's pending kubelet-serving request name, created at.
func nodeRequest(t *testing.T, name, node string, created time.Time) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", CreationTimestamp: metav1.NewTime(created)},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: testfixtures.SubjectPEM(t, "system:node:"+node, "system:nodes"), SignerName: certificatesv1.KubeletServingSignerName,
			Username: "system:node:" + node, Groups: []string{"system:nodes"},
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
		},
	}
}

func approvedRequest(t *testing.T, name, node string, at time.Time) *certificatesv1.CertificateSigningRequest {
	r := nodeRequest(t, name, node, at.Add(-time.Second))
	r.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(at)}}
	return r
}

// TestSyncHoldsARequestOverItsRateLimit: with 2 approvals per hour, a node
// approved twice (by anyone) in the last hour has its next request held,
// pending, counted once and retried when the window frees; another node is
// approved meanwhile. Approvals this process wrote count before its cache
// shows them.
func TestSyncHoldsARequestOverItsRateLimit(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	rate := map[string]any{"rateLimit": map[string]any{"maxApprovals": int64(2), "period": "1h"}}
	c, d := stormWorld(t, rate, now,
		approvedRequest(t, "a-1", "a", now.Add(-50*time.Minute)), approvedRequest(t, "a-2", "a", now.Add(-10*time.Minute)),
		nodeRequest(t, "a-3", "a", now), nodeRequest(t, "b-1", "b", now))
	for range 2 { // a resync: held and reported once
		err := c.Sync(context.Background(), "a-3")
		var later *requeueAfter
		if !errors.As(err, &later) || later.after != 10*time.Minute+time.Second {
			t.Fatalf("a-3: %v, want a retry in 10m1s (when a-1 leaves the window)", err)
		}
	}
	if got := testutil.ToFloat64(c.o.Metrics.undecided.WithLabelValues(UndecidedHeld)); got != 1 {
		t.Errorf("undecided{held} = %v, want 1", got)
	}
	if err := c.Sync(context.Background(), "b-1"); err != nil || len(d.names) != 1 || d.names[0] != "b-1" {
		t.Fatalf("b-1: %v, decided %v", err, d.names)
	}

	// The cache late: two pending requests of c, approved one after the
	// other; the third is held though the cache shows no approval yet.
	c2, d2 := stormWorld(t, rate, now, nodeRequest(t, "c-1", "c", now), nodeRequest(t, "c-2", "c", now.Add(time.Second)), nodeRequest(t, "c-3", "c", now.Add(2*time.Second)))
	for _, n := range []string{"c-1", "c-2"} {
		if err := c2.Sync(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	var later *requeueAfter
	if err := c2.Sync(context.Background(), "c-3"); !errors.As(err, &later) || len(d2.names) != 2 {
		t.Fatalf("c-3: %v, decided %v; want held after two", err, d2.names)
	}
}

// TestSyncSupersedesOlderDuplicates: a node's three retries and one request
// of another subject. Worked oldest first (the fair queue's order), the
// newest retry is approved and the two older denied Superseded, each once;
// the other subject is left alone. A policy without supersedeDuplicates
// approves the oldest and denies nothing.
func TestSyncSupersedesOlderDuplicates(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	reqs := func() []*certificatesv1.CertificateSigningRequest {
		other := nodeRequest(t, "other", "a", t0.Add(time.Minute))
		other.Spec.Request = testfixtures.SubjectPEM(t, "system:node:a", "system:nodes", "extra-org")
		return []*certificatesv1.CertificateSigningRequest{nodeRequest(t, "r-1", "a", t0), nodeRequest(t, "r-2", "a", t0.Add(time.Second)),
			nodeRequest(t, "r-3", "a", t0.Add(2*time.Second)), other}
	}
	c, d := stormWorld(t, map[string]any{"supersedeDuplicates": true}, t0, reqs()...)
	d.writeBack = true
	for _, n := range []string{"r-1", "r-2", "r-3", "r-1"} {
		if err := c.Sync(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"r-3": kube.ReasonPolicy + "/Approved", "r-1": "Superseded/Denied", "r-2": "Superseded/Denied"}
	if len(d.names) != 3 {
		t.Fatalf("decided %v, want r-3 approved and r-1, r-2 superseded, once each", d.names)
	}
	for i, n := range d.names {
		if got := d.decided[i].Reason + "/" + string(d.decided[i].Type); got != want[n] {
			t.Errorf("%s: %s, want %s", n, got, want[n])
		}
	}
	if got := testutil.ToFloat64(c.o.Metrics.superseded); got != 2 {
		t.Errorf("superseded_total = %v, want 2", got)
	}
	// An older duplicate seen after the newer one's approval is superseded too.
	late := nodeRequest(t, "r-0", "a", t0.Add(-time.Second))
	if err := d.idx.Add(late); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(context.Background(), "r-0"); err != nil || d.names[len(d.names)-1] != "r-0" || d.decided[len(d.decided)-1].Reason != csrpolicy.ReasonSuperseded {
		t.Errorf("r-0: %v, last decided %s %+v", err, d.names[len(d.names)-1], d.decided[len(d.decided)-1])
	}

	plain, pd := stormWorld(t, nil, t0, reqs()...)
	if err := plain.Sync(context.Background(), "r-1"); err != nil || len(pd.names) != 1 || pd.decided[0].Type != certificatesv1.CertificateApproved {
		t.Errorf("without supersedeDuplicates: %v, decided %v", err, pd.names)
	}
}

// TestThrottledWaitsForRetryAfterOfThatRequestOnly: the API server answers
// the decision 429 with Retry-After: 7. The decider returns at once (no
// client-go retry holding the worker), and Sync asks for that request again
// in 7 s, counted as throttled.
func TestThrottledWaitsForRetryAfterOfThatRequestOnly(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "7")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeconds":7},"code":429}`)
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := oneRequest(t, APIDecider{Client: cs}, false)
	start := time.Now()
	err = c.Sync(context.Background(), "r")
	var later *requeueAfter
	if !errors.As(err, &later) || later.after != 7*time.Second {
		t.Fatalf("Sync = %v, want a retry of this request in 7s", err)
	}
	if hits.Load() != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("%d calls in %v: client-go retried instead of returning the 429", hits.Load(), time.Since(start))
	}
	if got := testutil.ToFloat64(c.o.Metrics.errors.WithLabelValues(ErrThrottled)); got != 1 {
		t.Errorf("errors{throttled} = %v, want 1", got)
	}
	if _, ok := Throttled(errors.New("connection refused")); ok {
		t.Error("a network error is throttled")
	}
}

// TestNextRequeuesOnlyTheThrottledRequest: through the workers, a request
// answered 429 waits for its Retry-After while the others are decided.
func TestNextRequeuesOnlyTheThrottledRequest(t *testing.T) {
	now := time.Now()
	c, d := stormWorld(t, nil, now, nodeRequest(t, "slow", "a", now), nodeRequest(t, "b", "b", now), nodeRequest(t, "c", "c", now))
	c.o.Decider = throttleOne{name: "slow", next: d}
	for _, n := range []string{"slow", "b", "c"} {
		r, _ := c.o.CSRs.Get(n)
		c.Enqueue(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx, 1)
	deadline := time.Now().Add(5 * time.Second)
	for len(decidedNames(c)) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := decidedNames(c); len(got) != 2 {
		t.Fatalf("decided %v, want b and c while slow waits", got)
	}
	if c.queue.Len() != 0 {
		t.Errorf("the throttled request is queued (%d), not waiting for its Retry-After", c.queue.Len())
	}
}

func decidedNames(c *Controller) []string {
	d := c.o.Decider.(throttleOne).next.(*storeDecider)
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.names)
}

// throttleOne answers 429 (Retry-After 60 s) for one request.
type throttleOne struct {
	name string
	next Decider
}

func (t throttleOne) Decide(ctx context.Context, c *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict) (*certificatesv1.CertificateSigningRequest, error) {
	if c.Name == t.name {
		return nil, apierrorsTooMany(60)
	}
	return t.next.Decide(ctx, c, v)
}

func apierrorsTooMany(secs int) error {
	return apierrors.NewTooManyRequests("slow down", secs)
}
