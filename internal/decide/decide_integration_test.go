//go:build integration

package decide

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// client is the request every test here creates: a client certificate the
// devcluster's approver may approve.
var client = testcluster.CSR{Signer: certificatesv1.KubeAPIServerClientSignerName}

// decisionsAs is the use case writing and reviewing access as identity.
func decisionsAs(t *testing.T, identity string) (Decisions, *recorder) {
	t.Helper()
	cfg := testcluster.RestConfig(t, identity)
	w, err := kube.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := kube.NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	return Decisions{Writer: w, Access: a, Audit: rec}, rec
}

// live reads a CSR from the API server.
func live(t *testing.T, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get CSR %s: %v", name, err)
	}
	return c
}

// liveRef is the CSR name as a page would show it: its name and live UID.
func liveRef(t *testing.T, name string) Ref {
	return Ref{Name: name, UID: live(t, name).UID}
}

// condition is the live CSR's decision ("Approved", "Denied" or "") and its message.
func condition(t *testing.T, name string) (certificatesv1.RequestConditionType, string) {
	t.Helper()
	for _, c := range live(t, name).Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return c.Type, c.Message
		}
	}
	return "", ""
}

// TestOneOnTheAPIServer: the approver approves a request it may decide, with
// its condition naming it, audited with the object before and after; a second
// decision on the same request is refused as already decided.
func TestOneOnTheAPIServer(t *testing.T) {
	s, rec := decisionsAs(t, testcluster.Approver)
	name := testcluster.CreateCSR(t, client.With("usecase-csr-one"))
	ref := liveRef(t, name)
	ctx := context.Background()

	d := s.One(ctx, "approver", ref, true, "checked")
	if d.Err != nil {
		t.Fatalf("approve: %v", d.Err)
	}
	if typ, msg := condition(t, name); typ != certificatesv1.CertificateApproved || msg != "Approved by approver via clusterdesk: checked" {
		t.Errorf("live condition %q %q; want Approved with the approver's words", typ, msg)
	}
	if len(rec.got) != 1 || rec.got[0].Before == nil || rec.got[0].After == nil || rec.got[0].After.UID != ref.UID ||
		rec.got[0].Before.ResourceVersion == rec.got[0].After.ResourceVersion {
		t.Errorf("audited %+v; want one record with the object before and after the write", rec.got)
	}

	again := s.One(ctx, "approver", ref, false, "")
	if !apierrors.IsConflict(again.Err) || !strings.Contains(again.Err.Error(), "already approved") {
		t.Errorf("deny after approve: %v; want a Conflict saying it is already approved", again.Err)
	}
	if _, replaced := again.Replaced(); replaced {
		t.Error("an already-decided request is not a replaced one")
	}
}

// TestOneRefusesARequestReplacedSinceViewed: the request under the name was
// deleted and created again after the page showed it; nothing is written and
// the answer holds the new object.
func TestOneRefusesARequestReplacedSinceViewed(t *testing.T) {
	s, _ := decisionsAs(t, testcluster.Approver)
	name := testcluster.CreateCSR(t, client.With("usecase-csr-replaced"))
	seen := liveRef(t, name)
	now := testcluster.RecreateCSR(t, name, client)

	for _, approve := range []bool{true, false} {
		d := s.One(context.Background(), "approver", seen, approve, "")
		r, ok := d.Replaced()
		if !ok {
			t.Fatalf("approve=%v: %v; want a *kube.ReplacedError", approve, d.Err)
		}
		if r.Current == nil || r.Current.UID != now || r.Seen != seen.UID {
			t.Errorf("replaced: seen %s, current %v; want seen %s, current %s", r.Seen, r.Current, seen.UID, now)
		}
	}
	if c := live(t, name); c.UID != now || len(c.Status.Conditions) != 0 {
		t.Errorf("the new request %s has conditions %+v; want none", c.UID, c.Status.Conditions)
	}
}

// TestBatchWithOneReplaced: in a bulk approval, the one request replaced since
// the queue showed it is refused and stays pending; the others are approved.
func TestBatchWithOneReplaced(t *testing.T) {
	s, rec := decisionsAs(t, testcluster.Approver)
	var refs []Ref
	for _, sfx := range []string{"usecase-csr-a", "usecase-csr-b", "usecase-csr-c"} {
		refs = append(refs, liveRef(t, testcluster.CreateCSR(t, client.With(sfx))))
	}
	now := testcluster.RecreateCSR(t, refs[1].Name, client)

	out, err := s.Batch(context.Background(), "approver", refs, true, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range out {
		_, replaced := d.Replaced()
		switch {
		case i == 1 && !replaced:
			t.Errorf("%s (replaced): %v; want it refused as replaced", d.Ref.Name, d.Err)
		case i != 1 && d.Err != nil:
			t.Errorf("%s: %v; want it approved", d.Ref.Name, d.Err)
		case i != 1:
			if typ, _ := condition(t, d.Ref.Name); typ != certificatesv1.CertificateApproved {
				t.Errorf("%s is %q on the API server; want Approved", d.Ref.Name, typ)
			}
		}
	}
	if c := live(t, refs[1].Name); c.UID != now || len(c.Status.Conditions) != 0 {
		t.Errorf("the new request under %s: UID %s, conditions %+v; want %s pending", refs[1].Name, c.UID, c.Status.Conditions, now)
	}
	if len(rec.got) != 3 {
		t.Errorf("%d decisions audited; want 3 (the refused one too)", len(rec.got))
	}
}

// TestGroupApprovesTheNewestAndDeniesTheRest: a storm step as the approver.
func TestGroupApprovesTheNewestAndDeniesTheRest(t *testing.T) {
	s, _ := decisionsAs(t, testcluster.Approver)
	storm := client
	storm.CommonName = "usecase-csr-storm-" + strings.ReplaceAll(t.Name(), "/", "-")
	var refs []Ref
	for _, sfx := range []string{"usecase-csr-s0", "usecase-csr-s1", "usecase-csr-s2"} {
		refs = append(refs, liveRef(t, testcluster.CreateCSR(t, storm.With(sfx))))
	}
	out, err := s.Group(context.Background(), "approver", refs[2:], refs[:2], "storm")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]certificatesv1.RequestConditionType{refs[0].Name: certificatesv1.CertificateDenied,
		refs[1].Name: certificatesv1.CertificateDenied, refs[2].Name: certificatesv1.CertificateApproved}
	for _, d := range out {
		if d.Err != nil {
			t.Errorf("%s: %v", d.Ref.Name, d.Err)
		}
		if typ, msg := condition(t, d.Ref.Name); typ != want[d.Ref.Name] || !strings.HasSuffix(msg, "via clusterdesk: storm") {
			t.Errorf("%s is %q %q on the API server; want %q with the message", d.Ref.Name, typ, msg, want[d.Ref.Name])
		}
	}
}

// TestBatchForbiddenSigner: the approver may not decide kubelet-serving
// requests; MayDecide says so, and the API server refuses the write.
func TestBatchForbiddenSigner(t *testing.T) {
	s, _ := decisionsAs(t, testcluster.Approver)
	may := s.MayDecide(context.Background())
	if may == nil || !may(certificatesv1.KubeAPIServerClientSignerName) || may(certificatesv1.KubeletServingSignerName) {
		t.Fatalf("approver: may decide client %v, kubelet-serving %v; want true, false",
			may != nil && may(certificatesv1.KubeAPIServerClientSignerName), may != nil && may(certificatesv1.KubeletServingSignerName))
	}
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "usecase-csr-serving", Signer: certificatesv1.KubeletServingSignerName,
		CommonName: "system:node:usecase-csr", Organizations: []string{"system:nodes"}, DNSNames: []string{"usecase-csr.example"},
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature}})
	out, err := s.Batch(context.Background(), "approver", []Ref{liveRef(t, name)}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if !apierrors.IsForbidden(out[0].Err) {
		t.Errorf("approve kubelet-serving as the approver: %v; want Forbidden", out[0].Err)
	}
	if typ, _ := condition(t, name); typ != "" {
		t.Errorf("%s is %q; want it pending", name, typ)
	}

	auditor, _ := decisionsAs(t, testcluster.Auditor)
	if auditor.MayDecide(context.Background()) != nil {
		t.Error("the auditor may decide nothing: MayDecide should be nil")
	}
}
