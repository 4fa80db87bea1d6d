package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// deleteRecorder is the Editor's deleting half for page tests: it records each
// deletion (name and UID precondition) and deletes nothing.
type deleteRecorder struct {
	ObjectEditor // the rest panics: a cleanup must call nothing else
	mu           sync.Mutex
	deleted      map[string]types.UID
	dryRuns      int
	onDelete     func() // called before each real deletion
}

func (d *deleteRecorder) Delete(ctx context.Context, _ kube.Kind, name string, uid types.UID, dry bool, _ metav1.DeletionPropagation) (kube.WriteResult, error) {
	if !dry && d.onDelete != nil {
		d.onDelete()
	}
	if err := ctx.Err(); err != nil {
		return kube.WriteResult{}, err // as client-go does with a cancelled request
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if dry {
		d.dryRuns++
	} else {
		d.deleted[name] = uid
	}
	return kube.WriteResult{}, nil
}

// deletedNames is what has been deleted so far (workers may still be running).
func (d *deleteRecorder) deletedNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(d.deleted))
	for n := range d.deleted {
		names = append(names, n)
	}
	return names
}

// decidedCSR is a denied CSR without a request body (the cleanup reads none).
func decidedCSR(name string, created time.Time) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: uidFor(name), CreationTimestamp: metav1.NewTime(created)},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: apiClientSigner},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
			{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue}}},
	}
}

func newCleanupTestServer(t testing.TB, cluster Cluster, ed *deleteRecorder) *csrTestServer {
	t.Helper()
	return newSlowCleanupTestServer(t, cluster, ed, 0)
}

// newSlowCleanupTestServer is newCleanupTestServer whose cleanups switch to
// their progress page after progressAfter (0: the default).
func newSlowCleanupTestServer(t testing.TB, cluster Cluster, ed *deleteRecorder, progressAfter time.Duration) *csrTestServer {
	t.Helper()
	return newCSRConsole(t, cluster, signerAccess{signers: map[string]bool{apiClientSigner: true}}, func(d *Deps) {
		d.Editor, d.CleanupProgressAfter = ed, progressAfter
	})
}

func decidedCluster(n int, now time.Time) *csrCluster {
	items := make([]*certificatesv1.CertificateSigningRequest, n)
	for i := range items {
		items[i] = decidedCSR(fmt.Sprintf("old-%05d", i), now.Add(-8*24*time.Hour))
	}
	return newCSRCluster(items...)
}

// TestCleanupPreviewPagesItsNamesAndDeletesExactlyThem: 60 decided CSRs older
// than 7 days: the preview counts 60, lists and dry-runs 50 on page 1 and 10
// on page 2; the confirmation deletes exactly the 60, each with its UID.
func TestCleanupPreviewPagesItsNamesAndDeletesExactlyThem(t *testing.T) {
	now := time.Now()
	cluster := decidedCluster(60, now)
	cluster.order = append(cluster.order, fakeCSR(t, "young", apiClientSigner, "ann", now, certificatesv1.CertificateDenied))
	cluster.items["young"] = cluster.order[60]
	ed := &deleteRecorder{deleted: map[string]types.UID{}}
	ts := newCleanupTestServer(t, cluster, ed)
	sess := ts.login(t)

	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs/-/cleanup?state=decided&older=7d", nil, false)
	if rec.Code != http.StatusOK || doc.Find(`[data-testid="cleanup-count"]`).AttrOr("data-count", "") != "60" {
		t.Fatalf("status %d, count %q", rec.Code, doc.Find(`[data-testid="cleanup-count"]`).AttrOr("data-count", ""))
	}
	if n := doc.Find(`[data-testid="cleanup-item"]`).Length(); n != 50 || ed.dryRuns != 50 {
		t.Errorf("page 1 lists %d and dry-runs %d, want 50", n, ed.dryRuns)
	}
	_, page2 := ts.request(t, sess, http.MethodGet, "/csrs/-/cleanup?state=decided&older=7d&page=2", nil, false)
	if n := page2.Find(`[data-testid="cleanup-item"]`).Length(); n != 10 {
		t.Errorf("page 2 lists %d, want 10", n)
	}
	form := hiddenFieldsOf(doc.Find(`[data-testid="cleanup-form"]`))
	form.Set("confirm_count", "60")
	rec, result := ts.request(t, sess, http.MethodPost, "/csrs/-/cleanup/confirm", form, false)
	if rec.Code != http.StatusOK || len(ed.deleted) != 60 {
		t.Fatalf("confirm: status %d, %d deleted: %s", rec.Code, len(ed.deleted), result.Text())
	}
	for name, uid := range ed.deleted {
		if uid != uidFor(name) {
			t.Errorf("%s deleted with UID %q, want its own", name, uid)
		}
	}
	if _, ok := ed.deleted["young"]; ok {
		t.Error("a CSR younger than 7 days was deleted")
	}
}

// TestCleanupFinishesWhenTheBrowserGoesAway: the browser's request is
// cancelled after the first deletion (a closed tab, a proxy timeout); every
// previewed object is deleted all the same, none left half done. Fails when
// the deletions run on the request's context.
func TestCleanupFinishesWhenTheBrowserGoesAway(t *testing.T) {
	cluster := decidedCluster(40, time.Now())
	ed := &deleteRecorder{deleted: map[string]types.UID{}}
	ts := newCleanupTestServer(t, cluster, ed)
	sess := ts.login(t)
	_, doc := ts.request(t, sess, http.MethodGet, "/csrs/-/cleanup?state=decided&older=7d", nil, false)
	form := hiddenFieldsOf(doc.Find(`[data-testid="cleanup-form"]`))
	form.Set("confirm_count", "40")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ed.onDelete = cancel // the browser is gone once the first deletion starts
	r := httptest.NewRequest(http.MethodPost, "/csrs/-/cleanup/confirm", strings.NewReader(form.Encode())).WithContext(ctx)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-CSRF-Token", pageCSRFToken(t, ts.e, withCookie(sess)))
	r.AddCookie(sess)
	ts.do(r)
	if len(ed.deleted) != 40 {
		t.Fatalf("%d of 40 deleted after the browser went away, want all", len(ed.deleted))
	}
}

// BenchmarkCleanupPreview10k is the preview of "decided CSRs older than 7
// days" over 10,000 (and 50,000) matching CSRs: candidates from the cache,
// selection, fingerprint, one page of dry runs (answered at once here) and
// the rendered page.
func BenchmarkCleanupPreview10k(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ts := newCleanupTestServer(b, decidedCluster(n, time.Now()), &deleteRecorder{deleted: map[string]types.UID{}})
			sess := ts.login(b)
			for b.Loop() {
				rec, _ := ts.request(b, sess, http.MethodGet, "/csrs/-/cleanup?state=decided&older=7d", nil, false)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}

// hiddenFieldsOf is a form's hidden inputs, as a browser sends them.
func hiddenFieldsOf(form *goquery.Selection) url.Values {
	v := url.Values{}
	form.Find(`input[type="hidden"][name]`).Each(func(_ int, in *goquery.Selection) {
		v.Add(in.AttrOr("name", ""), in.AttrOr("value", ""))
	})
	return v
}
