package live

import (
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/clusterdesk/clusterdesk/handlers/internal/livetest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// The CSR queue's live rows are the queue's own rows (state, subject,
// findings, selection box with the CSR's UID), rendered once per change for every open queue,
// with the state tabs' counts over all CSRs.
func TestLiveRenderCSRQueueRows(t *testing.T) {
	request := testfixtures.SubjectPEM(t, "live-user")
	// pending-c asks for another subject: two pending requests of one subject
	// and requester would be a storm, one group row (TestLiveRenderCSRStorm).
	other := testfixtures.SubjectPEM(t, "live-other")
	cl := livetest.NewCluster("pending-a", "issued-b", "pending-c")
	for _, c := range cl.Requests {
		c.UID = livetest.UID(c.Name)
		c.Spec.Request = request
		if c.Name == "pending-c" {
			c.Spec.Request = other
		}
		c.Spec.SignerName = certificatesv1.KubeAPIServerClientSignerName
		c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}
	}
	cl.Requests["issued-b"].Status = certificatesv1.CertificateSigningRequestStatus{
		Conditions:  []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}},
		Certificate: []byte("issued"),
	}
	lv := newUpdates(cl)
	msgs := byEvent(lv.Render(kube.CSRs, []string{"pending-a", "issued-b", "gone-d"}, false))
	rows, ok := msgs["csrs-rows"]
	if !ok {
		t.Fatalf("no rows message in %v", msgs)
	}
	d := doc(t, rows.Data)

	a := d.Find(`tr#row-csrs-pending-a[data-csr-row][data-state="pending"]`)
	if a.Length() != 1 || a.Find(`[data-testid="row-select"][value="`+livetest.Ref("pending-a")+`"]`).Length() != 1 ||
		!strings.Contains(a.Find(`[data-testid="row-subject"]`).Text(), "live-user") {
		t.Errorf("pending row: want the queue's row with its selection box and decoded subject: %q", rows.Data)
	}
	b := d.Find(`tr#row-csrs-issued-b[data-state="issued"]`)
	if b.Length() != 1 || b.Find(`[data-testid="row-select"]`).Length() != 0 {
		t.Errorf("issued row: want the row without a selection box: %q", rows.Data)
	}
	if d.Find(`tr#row-csrs-gone-d[data-live-removed]`).Length() != 1 {
		t.Errorf("deleted CSR not marked removed: %q", rows.Data)
	}
	if d.Find(`tr#row-csrs-pending-c`).Length() != 0 {
		t.Errorf("unchanged row sent: %q", rows.Data)
	}
	for tab, want := range map[string]string{"all": "3", "pending": "2", "issued": "1", "denied": "0"} {
		got := strings.TrimSpace(d.Find(`[data-csr-live-tabs] [data-tab="` + tab + `"] [data-testid="tab-count"]`).Text())
		line := d.Find(`[data-csr-live-tabs] [data-tab="` + tab + `"] [data-testid="list-count"]`).Text()
		if got != want || !strings.Contains(strings.Join(strings.Fields(line), " "), "Showing "+want+" of 3") {
			t.Errorf("tab %s: count %q and line %q, want %s of 3", tab, got, line, want)
		}
	}
}

// BenchmarkLiveCSRQueueRows is the hub's cost per batch of CSR changes with
// 5,000 CSRs in the cache: one changed row (a decision) rendered once for
// every open queue, with the state counts over all CSRs.
func BenchmarkLiveCSRQueueRows(b *testing.B) {
	const n = 5000
	now := time.Now()
	cl := livetest.NewCluster()
	for i := range n {
		var conds []certificatesv1.RequestConditionType
		if i%10 >= 6 {
			conds = []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved}
		}
		name := fmt.Sprintf("csr-%05d", i)
		cl.Requests[name] = fakeCSR(b, name, apiClientSigner, fmt.Sprintf("user-%d", i%700), now.Add(-time.Duration(i)*time.Minute), conds...)
	}
	lv := newUpdates(cl)
	lv.Render(kube.CSRs, []string{"csr-00001"}, false) // warm: requests decoded once per process
	b.ReportAllocs()
	var size int
	for b.Loop() {
		msgs := lv.Render(kube.CSRs, []string{"csr-00042"}, false)
		size = len(byEvent(msgs)["csrs-rows"].Data)
	}
	b.ReportMetric(float64(size), "html-bytes")
}
