package approver

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// scriptedDecider answers every decision with err and counts the calls.
type scriptedDecider struct {
	err   error
	calls int
}

func (d *scriptedDecider) Decide(_ context.Context, c *certificatesv1.CertificateSigningRequest, _ csrpolicy.Verdict) (*certificatesv1.CertificateSigningRequest, error) {
	d.calls++
	return c, d.err
}

// oneRequest is a controller over one pending client request, named "r",
// that the policy "approve-all" approves.
func oneRequest(t *testing.T, d Decider, dryRun bool, conditions ...certificatesv1.CertificateSigningRequestCondition) (*Controller, *bytes.Buffer) {
	t.Helper()
	objs := []*unstructured.Unstructured{policyObject("approve-all", certificatesv1.KubeAPIServerClientSignerName, "Approve", "true")}
	return oneRequestUnder(t, d, dryRun, objs, func(name string, err error) { t.Fatalf("policy %s: %v", name, err) }, conditions...)
}

// oneRequestUnder is oneRequest under the policy objects objs; onError is
// told of those that cannot run.
func oneRequestUnder(t *testing.T, d Decider, dryRun bool, objs []*unstructured.Unstructured, onError func(string, error),
	conditions ...certificatesv1.CertificateSigningRequestCondition) (*Controller, *bytes.Buffer) {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "uid-r", ResourceVersion: "7"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    testfixtures.SubjectPEM(t, "alice"),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
		},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: conditions},
	}
	if err := idx.Add(c); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	p := NewPolicies(func() ([]*unstructured.Unstructured, error) { return objs, nil }, slog.New(slog.NewTextHandler(&log, nil)), onError)
	return NewController(Options{
		CSRs: certlisters.NewCertificateSigningRequestLister(idx), Policies: p, Decider: d, DryRun: dryRun,
		Metrics: NewMetrics(noPending, noSigners), Log: slog.New(slog.NewTextHandler(&log, nil)),
	}), &log
}

var csrResource = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

func TestSyncAnswersEachRefusalAsItDeserves(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		requeue bool
		kind    string
	}{
		{name: "accepted"},
		// Decided or changed meanwhile: evaluated again on the fresh object.
		{name: "conflict", err: apierrors.NewConflict(csrResource, "r", errors.New("modified")), requeue: true, kind: ErrConflict},
		// Not granted: the same write would be refused again; no retry loop.
		{name: "forbidden", err: apierrors.NewForbidden(csrResource, "r", errors.New("no approve")), kind: ErrForbidden},
		{name: "gone", err: apierrors.NewNotFound(csrResource, "r")},
		{name: "unreachable", err: errors.New("connection refused"), requeue: true, kind: ErrWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &scriptedDecider{err: tc.err}
			c, _ := oneRequest(t, d, false)
			err := c.Sync(context.Background(), "r")
			if (err != nil) != tc.requeue || d.calls != 1 {
				t.Errorf("Sync = %v after %d decisions; want requeue %v after 1", err, d.calls, tc.requeue)
			}
			for _, k := range []string{ErrConflict, ErrForbidden, ErrWrite} {
				want := 0.0
				if k == tc.kind {
					want = 1
				}
				if got := testutil.ToFloat64(c.o.Metrics.errors.WithLabelValues(k)); got != want {
					t.Errorf("errors{kind=%s} = %v, want %v", k, got, want)
				}
			}
		})
	}
}

func TestSyncNeverDecidesADecidedRequest(t *testing.T) {
	for _, typ := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		d := &scriptedDecider{}
		c, _ := oneRequest(t, d, false, certificatesv1.CertificateSigningRequestCondition{Type: typ, Status: corev1.ConditionTrue})
		if err := c.Sync(context.Background(), "r"); err != nil || d.calls != 0 {
			t.Errorf("%s: Sync = %v after %d decisions, want none", typ, err, d.calls)
		}
	}
}

func TestDryRunReportsARequestOnce(t *testing.T) {
	d := &scriptedDecider{}
	c, log := oneRequest(t, d, true)
	for range 3 { // a policy change and two resyncs
		if err := c.Sync(context.Background(), "r"); err != nil {
			t.Fatal(err)
		}
	}
	if d.calls != 1 || bytes.Count(log.Bytes(), []byte("would decide")) != 1 {
		t.Errorf("%d dry-run decisions, log:\n%s\nwant one", d.calls, log)
	}
	// Forgotten (the request was deleted): a new object is reported anew.
	c.Forget("uid-r")
	if err := c.Sync(context.Background(), "r"); err != nil || d.calls != 2 {
		t.Errorf("after Forget: %v, %d calls", err, d.calls)
	}
}
