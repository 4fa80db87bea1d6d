package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// BenchmarkHomePage measures GET / through the whole handler stack over
// 5,000 CSRs (60% pending over three signers, a storm of 500 among them):
// the attention items come from the queue's index and the kept findings,
// so a view of an unchanged cluster walks no CSR ("warm"); "changed" has one
// CSR changed before each view (the storm index is rebuilt from the pending
// requests, O(pending), as the queue's own views do).
func BenchmarkHomePage(b *testing.B) {
	const n = 5000
	now := time.Now()
	signers := []string{apiClientSigner, certificatesv1.KubeAPIServerClientKubeletSignerName, "example.com/custom"}
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
		c := fakeCSR(b, fmt.Sprintf("csr-%05d", i), signers[i%3], user, now.Add(-time.Duration(i)*time.Minute), conds...)
		c.ResourceVersion = "1"
		items = append(items, c)
	}
	cl := &notifyingCSRs{csrCluster: newCSRCluster(items...)}
	ts := newCSRTestServer(b, cl, signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.loginTB(b)
	get := func(b *testing.B) string {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(sess)
		rec := ts.do(r)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
		return rec.Body.String()
	}
	if body := get(b); !strings.Contains(body, `data-testid="attention-pending-csrs"`) {
		b.Fatal("the home page shows no pending CSRs")
	}
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			get(b)
		}
	})
	b.Run("changed", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			c := cl.items["csr-00001"].DeepCopy()
			c.ResourceVersion = fmt.Sprint(i + 1)
			cl.replace(c)
			get(b)
		}
	})
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
