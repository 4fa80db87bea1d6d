//go:build integration

package kube

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// startCache runs a Cache as identity until the test ends.
func startCache(t *testing.T, identity string) *Cache {
	t.Helper()
	c, err := NewCache(testcluster.RestConfig(t, identity), slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	waitFor(t, 30*time.Second, "cache ready", c.Ready)
	return c
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestClusterCacheSyncsEveryKind(t *testing.T) {
	c := startCache(t, testcluster.Admin)

	if got, want := c.ServerVersion(), testcluster.Require(t).Version; got == "" || (want != "" && got != want) {
		t.Errorf("ServerVersion %q, devcluster says %q", got, want)
	}
	// Which kinds this server serves, asked of discovery here rather than of the
	// cache: Kubernetes 1.28 serves admissionregistration.k8s.io/v1 (webhooks)
	// but ValidatingAdmissionPolicies only from 1.30 on.
	disco, err := kubernetes.NewForConfig(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Statuses() {
		served := true
		if st.Kind.Group == "admissionregistration.k8s.io" {
			list, err := disco.Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
			if err != nil {
				t.Fatal(err)
			}
			served = slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == st.Kind.Resource })
		}
		switch {
		case !served && !errors.Is(st.Err, ErrNotServed):
			t.Errorf("%s: %+v, want not served (discovery does not list it)", st.Kind.ID, st)
		case served && (st.State != StateSynced || st.Err != nil || st.SyncedAt.IsZero() || st.Kind.Version == ""):
			t.Errorf("%s: %+v, want synced", st.Kind.ID, st)
		}
	}
	fc, _ := c.Kind(FlowSchemas)
	t.Logf("server %s serves flowcontrol %s", c.ServerVersion(), fc.Version)

	// The API server maintains the mandatory flowcontrol objects itself.
	fss, err := c.FlowSchemas()
	if err != nil || !slices.ContainsFunc(fss, func(fs *flowcontrolv1.FlowSchema) bool { return fs.Name == "exempt" }) {
		t.Fatalf("FlowSchemas: %d, %v; want the mandatory exempt", len(fss), err)
	}
	if st := c.Status(FlowSchemas); st.Count != len(fss) {
		t.Errorf("Status count %d, lister %d", st.Count, len(fss))
	}
	pl, err := c.PriorityLevel("catch-all")
	if err != nil || pl.Spec.Limited == nil || pl.Spec.Limited.NominalConcurrencyShares == nil {
		t.Fatalf("PriorityLevel catch-all: %+v, %v", pl, err)
	}
	if _, err := c.FlowSchema("no-such-flowschema"); !apierrors.IsNotFound(err) {
		t.Errorf("missing FlowSchema: %v, want NotFound", err)
	}
	for name, list := range map[string]func() (int, error){
		"CSRs":       func() (int, error) { l, err := c.CSRs(); return len(l), err },
		"CRDs":       func() (int, error) { l, err := c.CRDs(); return len(l), err },
		"CSIDrivers": func() (int, error) { l, err := c.CSIDrivers(); return len(l), err },
		"Webhooks":   func() (int, error) { l, err := c.Webhooks(); return len(l), err },
		"Priorities": func() (int, error) { l, err := c.PriorityLevels(); return len(l), err },
	} {
		n, err := list()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: %d", name, n)
	}

	obj, err := c.Object(FlowSchemas, "exempt")
	if err != nil {
		t.Fatal(err)
	}
	text, err := YAML(obj)
	if err != nil {
		t.Fatal(err)
	}
	if want := "apiVersion: flowcontrol.apiserver.k8s.io/" + fc.Version + "\nkind: FlowSchema\n"; !strings.HasPrefix(text, want) || strings.Contains(text, "managedFields") {
		t.Errorf("YAML of FlowSchema exempt:\n%s", text)
	}
}

// The approver may only read CSRs: the other kinds are forbidden, not retried, and do
// not hold up readiness.
func TestClusterCacheRestrictedIdentity(t *testing.T) {
	c := startCache(t, testcluster.Approver)

	for _, st := range c.Statuses() {
		want := StateForbidden
		if st.Kind.ID == CSRs {
			want = StateSynced
		}
		if st.State != want {
			t.Errorf("%s: %s (%v), want %s", st.Kind.ID, st.State, st.Err, want)
		}
		if want == StateForbidden && !apierrors.IsForbidden(st.Err) {
			t.Errorf("%s: Err %v, want Forbidden", st.Kind.ID, st.Err)
		}
	}
	if _, err := c.CSRs(); err != nil {
		t.Errorf("CSRs: %v", err)
	}
	if _, err := c.CRDs(); !apierrors.IsForbidden(err) {
		t.Errorf("CRDs: %v, want Forbidden", err)
	}
	if _, err := c.Object(Webhooks, "x"); !apierrors.IsForbidden(err) {
		t.Errorf("Object(Webhooks): %v, want Forbidden", err)
	}
}

func TestClusterDecideCSR(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	c := startCache(t, testcluster.Admin)
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	name := testcluster.CreateCSR(t, testcluster.CSR{CommonName: "clusterdesk-it-user", Organizations: []string{"clusterdesk-it"},
		ExpirationSeconds: ptr.To[int32](600), Client: admin})

	waitFor(t, 5*time.Second, "the cache to see the new CSR", func() bool { _, err := c.CSR(name); return err == nil })
	seen, _ := c.CSR(name)

	warnings, err := w.DecideCSR(ctx, name, seen.UID, true, "", "integration test")
	if err != nil {
		t.Fatalf("approve: %v (warnings %q)", err, warnings)
	}
	live, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := csrDecision(live); d != "approved" || !slices.ContainsFunc(live.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved && c.Reason == ReasonApproved && c.Message == "integration test"
	}) {
		t.Fatalf("conditions after approve: %+v", live.Status.Conditions)
	}

	_, err = w.DecideCSR(ctx, name, seen.UID, false, "", "too late")
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "already approved") {
		t.Fatalf("deny after approve: %v, want a Conflict saying it is already approved", err)
	}
	t.Logf("refusal reads: %v", err)

	waitFor(t, 5*time.Second, "the cache to see the approval", func() bool {
		csr, err := c.CSR(name)
		return err == nil && csrDecision(csr) == "approved"
	})
}

// The API server itself refuses an approval whose metadata.uid is not the live
// object's: DecideCSR relies on that precondition, not on a check of its own.
func TestClusterDecideCSRRefusesAReplacedCSR(t *testing.T) {
	w, err := NewWriter(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "replaced"})
	seen, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newUID := testcluster.RecreateCSR(t, name, testcluster.CSR{CommonName: "system:node:it-impostor", Organizations: []string{"system:nodes"}})

	_, err = w.DecideCSR(ctx, name, seen.UID, true, "", "reviewed the old one")
	var replaced *ReplacedError
	if !errors.As(err, &replaced) || !apierrors.IsConflict(err) || replaced.Current.UID != newUID {
		t.Fatalf("approve with the old UID: %v, want a ReplacedError (a Conflict) naming the new object %s", err, newUID)
	}
	// The refusal is the API server's precondition (its wording is not a
	// contract, so only logged): "Precondition failed: UID in precondition …".
	t.Logf("the API server answered: %v", replaced.Err)
	live, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.UID != newUID || len(live.Status.Conditions) != 0 {
		t.Errorf("the new CSR: UID %s, conditions %+v; want %s untouched", live.UID, live.Status.Conditions, newUID)
	}
}
