//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// Automation gone wrong on the real API server: one requester asks the
// kube-apiserver-client signer for a new subject on every retry. Its pending
// requests are one group row (not one row each), which says how many
// subjects they name and offers "deny all" but not "approve the newest" (one
// certificate among many different ones); the group's view lists every
// request; its preview names each request with its subject and UID; the
// confirmed denial is written to each on the API server.
func TestCSRRequesterStormOnTheAPIServer(t *testing.T) {
	const n = 3 * csrqueue.RequesterStormMin
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	// A service account no other test uses, so the storm is this test's
	// alone; the admin impersonates it (as a superuser: only the requester's
	// name matters here, and no ServiceAccount object is needed for that).
	requester := fmt.Sprintf("system:serviceaccount:it-runaway:issuer-%d", time.Now().UnixNano())
	cfg := rest.CopyConfig(testcluster.RestConfig(t, testcluster.Admin))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: requester, Groups: []string{"system:masters", "system:serviceaccounts", "system:authenticated"}}
	runaway := kubernetes.NewForConfigOrDie(cfg)
	names := make([]string, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				names[i] = testcluster.CreateCSR(t, testcluster.CSR{Suffix: fmt.Sprintf("r%02d", i), Client: runaway})
			}
		})
	}
	wg.Wait()
	ls.waitCached(t, names...)

	rec := ls.do(newGet("/csrs?requester="+url.QueryEscape(requester), sess))
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil || rec.Code != http.StatusOK {
		t.Fatalf("queue: status %d, %v", rec.Code, err)
	}
	group := doc.Find(`[data-testid="group-row"]`)
	if group.Length() != 1 || group.Find(`[data-testid="group-count"]`).Text() != fmt.Sprint(n) || doc.Find(`[data-testid="list-row"]`).Length() != 0 {
		t.Fatalf("one group row of %d and no request rows: %d groups, %d rows", n, group.Length(), doc.Find(`[data-testid="list-row"]`).Length())
	}
	id := group.AttrOr("data-csr-group", "")
	if id != csrqueue.RequesterStormID(certificatesv1.KubeAPIServerClientSignerName, requester) || group.AttrOr("data-by-requester", "-") == "-" {
		t.Errorf("the row is the requester's storm: %q", id)
	}
	if s := group.Find(`[data-testid="row-subject"]`).Text(); s != fmt.Sprintf("%d different subjects", n) {
		t.Errorf("subject cell %q", s)
	}
	if group.Find(`[data-testid="group-approve-newest"]`).Length() != 0 || group.Find(`[data-testid="group-deny-all"]`).Length() != 1 {
		t.Error(`a requester storm offers "deny all" and not "approve the newest"`)
	}

	// Its view: every request, each its own row, under a banner.
	_, view, _ := ls.get(t, sess, "/csrs?group="+id)
	if rows := view.Find(`[data-testid="list-row"]`).Length(); rows != n {
		t.Errorf("the group's view shows %d rows, want %d", rows, n)
	}
	if b := view.Find(`[data-testid="group-subjects"]`).Text(); !strings.Contains(b, fmt.Sprintf("%d different subjects", n)) {
		t.Errorf("banner %q", b)
	}

	// "Approve the newest" is refused with the reason, even asked by URL.
	code, refused, _ := ls.get(t, sess, "/csrs/groups/"+id+"?action=approve-newest")
	if code != http.StatusBadRequest || !strings.Contains(refused.Text(), "different subjects") {
		t.Errorf("approve newest of a requester storm: status %d, %q", code, strings.Join(strings.Fields(refused.Find("main").Text()), " "))
	}

	code, preview, _ := ls.get(t, sess, "/csrs/groups/"+id+"?action=deny-all")
	if code != http.StatusOK {
		t.Fatalf("preview: status %d", code)
	}
	items := preview.Find(`[data-testid="group-item"]`)
	if items.Length() != n || items.Filter(`[data-approve="true"]`).Length() != 0 {
		t.Fatalf("preview: %d items (%d approved), want %d denials", items.Length(), items.Filter(`[data-approve="true"]`).Length(), n)
	}
	subjects := map[string]bool{}
	items.Each(func(_ int, s *goquery.Selection) {
		subjects[s.Find(`[data-testid="group-item-subject"]`).Text()] = true
	})
	if len(subjects) != n || subjects[""] {
		t.Errorf("each preview line names its own subject: %d distinct", len(subjects))
	}
	form := url.Values{"action": {"deny-all"}, "message": {"runaway issuer"}}
	preview.Find(`[data-testid="group-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		if k := s.AttrOr("name", ""); k == "approve" || k == "deny" {
			form.Add(k, s.AttrOr("value", ""))
		}
	})
	res := ls.post(t, sess, "/csrs/groups/"+id+"/decide", form)
	if res.Code != http.StatusOK {
		t.Fatalf("decide: status %d", res.Code)
	}
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	for _, nm := range names {
		c, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), nm, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Status.Conditions) != 1 || c.Status.Conditions[0].Type != certificatesv1.CertificateDenied || c.Spec.Username != requester {
			t.Errorf("%s (by %s): %+v, want Denied", nm, c.Spec.Username, c.Status.Conditions)
		}
	}
}
