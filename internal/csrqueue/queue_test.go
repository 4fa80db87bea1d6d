package csrqueue

import (
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// source is a kube.Cache stand-in: a list of CSRs that reports changes.
type source struct {
	items  []*certificatesv1.CertificateSigningRequest
	lists  int
	notify []func(kube.KindID, string)
}

func (s *source) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) {
	s.lists++
	return s.items, nil
}

func (s *source) OnChange(fn func(kube.KindID, string)) { s.notify = append(s.notify, fn) }

func (s *source) change(id kube.KindID, name string) {
	for _, fn := range s.notify {
		fn(id, name)
	}
}

// pending is n pending requests of one subject from one requester: a storm.
func pending(t *testing.T, n int) []*certificatesv1.CertificateSigningRequest {
	body := testfixtures.SubjectPEM(t, "kubelet-w")
	created := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var out []*certificatesv1.CertificateSigningRequest
	for i := range n {
		out = append(out, &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("storm-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
				CreationTimestamp: metav1.NewTime(created.Add(time.Duration(i) * time.Second))},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: body, SignerName: clientSigner, Username: "kubelet-w"},
		})
	}
	return out
}

// The storm index for pages of one CSR is listed and grouped again only
// after the source reported a CSR change; other kinds' changes leave it.
func TestQueueStormsFollowCSRChanges(t *testing.T) {
	src := &source{items: pending(t, 3)}
	q := New(src)
	st := q.Storms()
	if s := st.Of("storm-0"); s == nil || len(s.Members()) != 3 {
		t.Fatalf("storm of 3, got %+v", s)
	}
	if q.Storms() != st || src.lists != 1 {
		t.Errorf("an unchanged cluster was listed %d times", src.lists)
	}
	src.change(kube.FlowSchemas, "x")
	if q.Storms() != st || src.lists != 1 {
		t.Error("a FlowSchema change rebuilt the CSR storm index")
	}
	src.items = append(src.items, pending(t, 4)[3])
	src.change(kube.CSRs, "storm-3")
	if s := q.Storms().Of("storm-3"); s == nil || len(s.Members()) != 4 || src.lists != 2 {
		t.Errorf("after a CSR change: storm %+v, %d lists", s, src.lists)
	}
}

// Two queues (two servers in one process) share no cache.
func TestQueuesShareNothing(t *testing.T) {
	items := pending(t, 2)
	a, b := New(&source{items: items}), New(&source{items: items})
	Run(items, Query{}, Env{Checks: a.Checks(), Words: plainWords{}, Cache: a.Facts(), PageSize: 10, Now: time.Now()})
	if a.Facts().Len() != 2 || b.Facts().Len() != 0 {
		t.Errorf("facts: a %d, b %d; want 2 and 0", a.Facts().Len(), b.Facts().Len())
	}
}

// plainWords words nothing: these tests filter by no text.
type plainWords struct{}

func (plainWords) Status(state string) string { return state }
func (plainWords) Static(*certificatesv1.CertificateSigningRequest, string, *csr.Request, error) (string, string) {
	return "", ""
}
func (plainWords) Findings([]csr.Finding) string { return "" }
func (plainWords) Moment(*certificatesv1.CertificateSigningRequest, string, time.Time, time.Time) (string, string) {
	return "", ""
}

// A queue over a source that reports changes and reads one CSR lists it for
// its first view only: a change is read by name (a deleted one is gone), and
// a status change of the kind (a watch lost or recovered, after which the
// informer may have listed again) makes the next view list once more.
func TestQueueReadsChangesByName(t *testing.T) {
	src := &gettingSource{source{items: pending(t, 3)}}
	q := New(src)
	env := Env{Now: time.Now(), Checks: q.Checks(), Words: plainWords{}, PageSize: 10}
	view := func() Result {
		t.Helper()
		res, err := q.Run(Query{}, env)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := view(); res.Total != 3 || src.lists != 1 {
		t.Fatalf("first view: %d CSRs, %d lists", res.Total, src.lists)
	}
	src.items = append(src.items[1:], pending(t, 4)[3]) // storm-0 deleted, storm-3 new
	src.change(kube.CSRs, "storm-0")
	src.change(kube.CSRs, "storm-3")
	src.change(kube.FlowSchemas, "x")
	res := view()
	if res.Total != 3 || q.Storms().Of("storm-3") == nil || q.Storms().Of("storm-0") != nil || src.lists != 1 {
		t.Errorf("after a deletion and a new request: %d CSRs, %d lists", res.Total, src.lists)
	}
	src.change(kube.CSRs, "")
	if view(); src.lists != 2 {
		t.Errorf("after the kind's status changed: %d lists, want 2", src.lists)
	}
}
