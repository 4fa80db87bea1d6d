package present

import (
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/views/model"
)

func csrWith(name string, created time.Time, cert []byte, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice", Request: []byte("not pem")},
		Status:     certificatesv1.CertificateSigningRequestStatus{Certificate: cert},
	}
	for _, t := range conds {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue})
	}
	return c
}

func TestCSRStatus(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name string
		csr  *certificatesv1.CertificateSigningRequest
		text string
		tone model.Tone
	}{
		{"pending", csrWith("a", now, nil), "Pending", model.TonePending},
		{"approved not issued is not done", csrWith("a", now, nil, certificatesv1.CertificateApproved), "Approved, not issued", model.TonePending},
		{"issued", csrWith("a", now, []byte("x"), certificatesv1.CertificateApproved), "Approved, Issued", model.ToneOK},
		{"denied", csrWith("a", now, nil, certificatesv1.CertificateDenied), "Denied", model.ToneError},
		{"failed", csrWith("a", now, nil, certificatesv1.CertificateApproved, certificatesv1.CertificateFailed), "Failed", model.ToneError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := CSRStatus(tc.csr)
			if b.Text != tc.text || b.Tone != tc.tone {
				t.Errorf("got %q/%s, want %q/%s", b.Text, b.Tone, tc.text, tc.tone)
			}
		})
	}
}

func TestCSRListFilterSortAndBadRequest(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := []*certificatesv1.CertificateSigningRequest{
		csrWith("old", now.Add(-48*time.Hour), nil),
		csrWith("young", now.Add(-time.Minute), nil, certificatesv1.CertificateDenied),
		csrWith("middle", now.Add(-time.Hour), nil),
	}
	p := CSRList(items, ListQuery{Sort: "age"}, now)
	if got := [3]string{p.Rows[0].Name, p.Rows[1].Name, p.Rows[2].Name}; got != [3]string{"young", "middle", "old"} {
		t.Errorf("age ascending order = %v", got)
	}
	if p.Columns[1].Sorted != "asc" || p.Columns[1].SortHref != "/csrs?dir=desc&sort=age" {
		t.Errorf("age column = %+v", p.Columns[1])
	}
	if p.Rows[0].Cells[1].Text != "60s" {
		t.Errorf("age text = %q", p.Rows[0].Cells[1].Text)
	}
	last := p.Rows[0].Cells[len(p.Rows[0].Cells)-1]
	if len(last.Badges) != 2 || last.Badges[1].Text != "Bad request" {
		t.Errorf("condition cell should flag the undecodable request: %+v", last)
	}

	f := CSRList(items, ListQuery{Filter: "DENIED"}, now)
	if f.Shown != 1 || f.Total != 3 || f.Rows[0].Name != "young" {
		t.Errorf("filter by badge text: shown %d total %d", f.Shown, f.Total)
	}
	none := CSRList(items, ListQuery{Filter: "zzz"}, now)
	if none.Shown != 0 || none.Empty == "" {
		t.Errorf("empty filter result should explain itself: %+v", none.Empty)
	}
	unknown := CSRList(items, ListQuery{Sort: "bogus", Desc: true}, now)
	if unknown.Sort != "name" || unknown.Rows[0].Name != "young" {
		t.Errorf("unknown sort falls back to name: sort=%q first=%q", unknown.Sort, unknown.Rows[0].Name)
	}
}

func TestCSRDetailShowsUndecodableRequest(t *testing.T) {
	p := CSRDetail(csrWith("bad", time.Now(), nil), time.Now())
	if len(p.Problems) != 1 || p.Problems[0].TestID != "banner-bad-request" {
		t.Fatalf("problems = %+v", p.Problems)
	}
}
