package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// BenchmarkHomePage measures GET / through the whole handler stack over
// 5,000 CSRs (60% pending over three signers, a storm of 500 among them):
// the attention items come from the queue's index and the kept findings,
// so a view of an unchanged cluster walks no CSR ("warm"); "changed" has one
// CSR changed before each view (the storm index follows the change, O(log n),
// as the queue's own views do: "queue-changed" is GET /csrs after one change).
func BenchmarkHomePage(b *testing.B) {
	const n = 5000
	now := time.Now()
	signers := []string{apiClientSigner, certificatesv1.KubeAPIServerClientKubeletSignerName, "example.com/custom"}
	bodies := benchBodies{}
	var items []*certificatesv1.CertificateSigningRequest
	for i := range n {
		var conds []certificatesv1.RequestConditionType
		switch i % 10 {
		case 6, 7, 8, 9:
			conds = []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved}
		}
		user := fmt.Sprintf("user-%d", i%700)
		if i < 500 {
			user = "storm-user" // one requester, subject and signer: a storm
		}
		items = append(items, bodies.csr(b, fmt.Sprintf("csr-%05d", i), signers[i%3], user, now.Add(-time.Duration(i)*time.Minute), conds...))
	}
	benchViewsAfterChanges(b, items, "csr-00001", true)
}

// BenchmarkHomePageKubeletStorm is a storm's shape: 5,000 pending requests
// from one node (a kubelet asking again and again, one storm) and 20,000
// decided ones, one CSR changed before each view of the home page and of the
// queue: a view after a change costs what changed, not the 5,000.
func BenchmarkHomePageKubeletStorm(b *testing.B) {
	now := time.Now()
	bodies := benchBodies{}
	var items []*certificatesv1.CertificateSigningRequest
	for i := range 5000 {
		items = append(items, bodies.csr(b, fmt.Sprintf("storm-%05d", i), certificatesv1.KubeAPIServerClientKubeletSignerName,
			"system:node:w1", now.Add(-time.Duration(i)*time.Second)))
	}
	for i := range 20000 {
		cond := certificatesv1.CertificateApproved
		if i%5 == 0 {
			cond = certificatesv1.CertificateDenied
		}
		items = append(items, bodies.csr(b, fmt.Sprintf("done-%05d", i), apiClientSigner, fmt.Sprintf("user-%d", i%700),
			now.Add(-time.Duration(i)*time.Minute), cond))
	}
	benchViewsAfterChanges(b, items, "storm-00001", false)
}

// benchViewsAfterChanges serves items and measures the home page (warm: no
// change between views) and the home page and the queue with changed (a
// pending request) changed before each view.
func benchViewsAfterChanges(b *testing.B, items []*certificatesv1.CertificateSigningRequest, changed string, warm bool) {
	cl := &notifyingCSRs{csrCluster: newCSRCluster(items...)}
	ts := newCSRTestServer(b, cl, signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(b)
	get := func(b *testing.B, path string) string {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.AddCookie(sess)
		rec := ts.do(r)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: status %d", path, rec.Code)
		}
		return rec.Body.String()
	}
	if body := get(b, "/"); !strings.Contains(body, `data-testid="attention-pending-csrs"`) {
		b.Fatal("the home page shows no pending CSRs")
	}
	if warm {
		b.Run("warm", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				get(b, "/")
			}
		})
	}
	i := 0
	change := func() {
		i++
		c := cl.items[changed].DeepCopy()
		c.ResourceVersion = fmt.Sprint(i + 1)
		cl.replace(c)
	}
	for _, v := range []struct{ name, path string }{{"changed", "/"}, {"queue-changed", "/csrs"}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				change()
				get(b, v.path)
			}
		})
	}
}

// benchBodies signs one request per requester (the CSRs' subject), not one
// per CSR: tens of thousands of CSRs build in a moment.
type benchBodies map[string][]byte

func (bs benchBodies) csr(b *testing.B, name, signer, user string, created time.Time, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	body, ok := bs[user]
	if !ok {
		body = testfixtures.SubjectPEM(b, user)
		bs[user] = body
	}
	// fakeCSR's object, with the shared body.
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: uidFor(name), CreationTimestamp: metav1.NewTime(created), ResourceVersion: "1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Username: user, Request: body,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}},
	}
	for _, ty := range conds {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: ty, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(created)})
	}
	return c
}

// notifyingCSRs is a CSR cache that reports changes, as kube.Cache does: the
// queue's index and the kept findings follow them instead of listing.
type notifyingCSRs struct {
	*csrCluster
	listeners []func(kube.KindID, string)
}

func (c *notifyingCSRs) OnChange(fn func(kube.KindID, string)) { c.listeners = append(c.listeners, fn) }

// replace puts a changed CSR in place of its old version and reports it.
func (c *notifyingCSRs) replace(it *certificatesv1.CertificateSigningRequest) {
	c.items[it.Name] = it
	for i, o := range c.order {
		if o.Name == it.Name {
			c.order[i] = it
		}
	}
	for _, fn := range c.listeners {
		fn(kube.CSRs, it.Name)
	}
}
