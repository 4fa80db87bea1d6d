//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// cleanupRunLabel marks the objects one cleanup test creates: every selector
// in these tests names its own run, so no test ever selects another's (or a
// seeded) object on the shared devcluster.
const cleanupRunLabel = "clusterdesk-cleanup-test"

// newCleanupServer is a console acting as identity with the Editor the
// cleanup deletes with; more sets further dependencies.
func newCleanupServer(t *testing.T, identity string, readOnly bool, more ...func(*Deps)) *liveServer {
	t.Helper()
	cfg := testcluster.RestConfig(t, identity)
	return newLiveServerWith(t, cfg, identity, readOnly, func(d *Deps) {
		ed, err := kube.NewEditor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d.Editor = ed
		for _, m := range more {
			m(d)
		}
	})
}

// cleanupDrivers creates n CSIDrivers labelled with a run of their own (as
// admin, deleted when the test ends if still there) and returns the run's
// selector and the drivers' names.
func cleanupDrivers(t *testing.T, cs kubernetes.Interface, n int) (selector string, names []string) {
	t.Helper()
	run := fmt.Sprintf("r%d", time.Now().UnixNano())
	for i := range n {
		name := fmt.Sprintf("it-cleanup-%s-%02d.example.com", run, i)
		createDriver(t, cs, name, run)
		names = append(names, name)
	}
	return cleanupRunLabel + "=" + run, names
}

func createDriver(t *testing.T, cs kubernetes.Interface, name, run string) types.UID {
	t.Helper()
	d, err := cs.StorageV1().CSIDrivers().Create(context.Background(), &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{cleanupRunLabel: run}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &d.UID}})
	})
	return d.UID
}

// waitDriversCached waits until the console's cache shows each driver with its current UID.
func (ls *liveServer) waitDriversCached(t *testing.T, cs kubernetes.Interface, names ...string) {
	t.Helper()
	for _, n := range names {
		live, err := cs.StorageV1().CSIDrivers().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the cache to show "+n, 10*time.Second, func() bool {
			d, err := ls.cache.CSIDriver(n)
			return err == nil && d.UID == live.UID
		})
	}
}

func driverUIDs(t *testing.T, cs kubernetes.Interface, names []string) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, n := range names {
		d, err := cs.StorageV1().CSIDrivers().Get(context.Background(), n, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Fatal(err)
		default:
			out[n] = d.UID
		}
	}
	return out
}

// previewForm opens a cleanup preview and returns its page and confirmation form's fields.
func (ls *liveServer) previewForm(t *testing.T, sess *http.Cookie, path string) (*goquery.Document, url.Values) {
	t.Helper()
	code, doc, _ := ls.get(t, sess, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, code, squash(doc.Selection))
	}
	return doc, hiddenFields(doc.Find(`[data-testid="cleanup-form"]`))
}

func previewCount(t *testing.T, doc *goquery.Document) int {
	t.Helper()
	n, err := strconv.Atoi(doc.Find(`[data-testid="cleanup-count"]`).AttrOr("data-count", ""))
	if err != nil {
		t.Fatalf("the preview shows no count: %s", squash(doc.Selection))
	}
	return n
}

func resultCount(doc *goquery.Document, result string) int {
	n, _ := strconv.Atoi(doc.Find(`[data-testid="cleanup-result-count"][data-result="`+result+`"]`).AttrOr("data-count", "0"))
	return n
}

func postDoc(t *testing.T, rec *httptest.ResponseRecorder) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestCleanupPreviewCountIsWhatGoes: 25 labelled drivers; the preview counts
// and names exactly them, a confirmation without the typed count deletes
// nothing, with it every one of them is deleted (each by its UID) and
// nothing else.
func TestCleanupPreviewCountIsWhatGoes(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ls := newCleanupServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	selector, names := cleanupDrivers(t, cs, 25)
	ls.waitDriversCached(t, cs, names...)
	// A bystander with a different run label must survive.
	_, bystander := cleanupDrivers(t, cs, 1)
	ls.waitDriversCached(t, cs, bystander...)

	doc, form := ls.previewForm(t, sess, "/csidrivers/-/cleanup?selector="+url.QueryEscape(selector))
	if n := previewCount(t, doc); n != 25 {
		t.Fatalf("preview counts %d, want 25", n)
	}
	listed := doc.Find(`[data-testid="cleanup-items"] [data-testid="cleanup-item"]`)
	if listed.Length() != 25 || listed.Filter(`[data-result="would be deleted"]`).Length() != 25 {
		t.Fatalf("preview lists %d objects (%d passed the dry run), want 25", listed.Length(), listed.Filter(`[data-result="would be deleted"]`).Length())
	}
	for _, n := range names {
		if listed.Filter(`[data-name="`+n+`"]`).Length() != 1 {
			t.Errorf("%s is not in the preview", n)
		}
	}
	if doc.Find(`[data-testid="cleanup-confirm"]`).Length() != 1 {
		t.Fatal("more than 20 objects: the preview must ask for the count")
	}

	form.Set("confirm_count", "24")
	rec := ls.post(t, sess, "/csidrivers/-/cleanup/confirm", form)
	if rec.Code != http.StatusUnprocessableEntity || postDoc(t, rec).Find(`[data-testid="cleanup-count-unconfirmed"]`).Length() != 1 {
		t.Fatalf("a wrong typed count: status %d, want 422 with the reason", rec.Code)
	}
	form.Del("confirm_count")
	if rec := ls.post(t, sess, "/csidrivers/-/cleanup/confirm", form); rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("no typed count: status %d, want 422", rec.Code)
	}
	if left := driverUIDs(t, cs, names); len(left) != 25 {
		t.Fatalf("refused confirmations deleted %d objects", 25-len(left))
	}

	form.Set("confirm_count", "25")
	rec = ls.post(t, sess, "/csidrivers/-/cleanup/confirm", form)
	result := postDoc(t, rec)
	if rec.Code != http.StatusOK || resultCount(result, "deleted") != 25 {
		t.Fatalf("confirm: status %d, %d deleted: %s", rec.Code, resultCount(result, "deleted"), squash(result.Selection))
	}
	if left := driverUIDs(t, cs, names); len(left) != 0 {
		t.Errorf("still there after the cleanup: %v", left)
	}
	if left := driverUIDs(t, cs, bystander); len(left) != 1 {
		t.Errorf("the bystander outside the selector was deleted")
	}
}

// TestCleanupLeavesAnObjectReplacedSincePreview: between preview and
// confirmation one driver is deleted and created again under its name; the
// confirmation deletes nothing (the set is not the previewed one), and the
// new object in particular survives.
func TestCleanupLeavesAnObjectReplacedSincePreview(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ls := newCleanupServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	selector, names := cleanupDrivers(t, cs, 3)
	ls.waitDriversCached(t, cs, names...)
	// The age filter: the preview of drivers at least a second old.
	time.Sleep(1100 * time.Millisecond)
	doc, form := ls.previewForm(t, sess, "/csidrivers/-/cleanup?older=1s&selector="+url.QueryEscape(selector))
	if n := previewCount(t, doc); n != 3 {
		t.Fatalf("preview counts %d, want 3", n)
	}

	run := strings.TrimPrefix(selector, cleanupRunLabel+"=")
	if err := cs.StorageV1().CSIDrivers().Delete(context.Background(), names[1], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the driver to be gone", 10*time.Second, func() bool { return len(driverUIDs(t, cs, names[1:2])) == 0 })
	newUID := createDriver(t, cs, names[1], run)
	ls.waitDriversCached(t, cs, names[1])

	rec := ls.post(t, sess, "/csidrivers/-/cleanup/confirm", form)
	if rec.Code != http.StatusConflict || postDoc(t, rec).Find(`[data-testid="cleanup-changed"]`).Length() != 1 {
		t.Fatalf("confirming a changed set: status %d, want 409 with a word on it: %s", rec.Code, squash(postDoc(t, rec).Selection))
	}
	left := driverUIDs(t, cs, names)
	if left[names[1]] != newUID {
		t.Fatalf("the object created after the preview was deleted or replaced: %v", left)
	}
	if len(left) != 3 {
		t.Errorf("a refused confirmation deleted objects: %v left", left)
	}
}

// TestCleanupForbiddenPerObject: the auditor may list CSIDrivers but not
// delete them: the preview shows each as forbidden before anything is
// deleted, and confirming reports each forbidden and deletes nothing.
func TestCleanupForbiddenPerObject(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ls := newCleanupServer(t, testcluster.Auditor, false)
	sess := ls.login(t)
	selector, names := cleanupDrivers(t, cs, 2)
	ls.waitDriversCached(t, cs, names...)

	doc, form := ls.previewForm(t, sess, "/csidrivers/-/cleanup?selector="+url.QueryEscape(selector))
	if n := doc.Find(`[data-testid="cleanup-item"][data-result="forbidden"]`).Length(); n != 2 || doc.Find(`[data-testid="cleanup-forbidden"]`).Length() != 1 {
		t.Fatalf("preview: %d objects forbidden, want 2 and a banner: %s", n, squash(doc.Selection))
	}
	rec := ls.post(t, sess, "/csidrivers/-/cleanup/confirm", form)
	result := postDoc(t, rec)
	if rec.Code != http.StatusForbidden || resultCount(result, "forbidden") != 2 || resultCount(result, "deleted") != 0 {
		t.Fatalf("confirm: status %d, %d forbidden: %s", rec.Code, resultCount(result, "forbidden"), squash(result.Selection))
	}
	if left := driverUIDs(t, cs, names); len(left) != 2 {
		t.Errorf("a forbidden cleanup deleted objects: %v left", left)
	}
}

// TestCleanupRefusesBadInput: a bad label selector and a bad age are 400s in
// words; a state filter on a kind without states too.
func TestCleanupRefusesBadInput(t *testing.T) {
	ls := newCleanupServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	for path, want := range map[string]string{
		"/csidrivers/-/cleanup?selector=" + url.QueryEscape("app in (a"): "is not a label selector",
		"/csidrivers/-/cleanup?selector=" + url.QueryEscape("a b"):       "is not a label selector",
		"/csrs/-/cleanup?older=7weeks":                                   "not a duration",
		"/csidrivers/-/cleanup?state=decided":                            "CertificateSigningRequests only",
	} {
		code, doc, _ := ls.get(t, sess, path)
		if code != http.StatusBadRequest || !strings.Contains(squash(doc.Selection), want) {
			t.Errorf("%s: status %d, want 400 saying %q: %s", path, code, want, squash(doc.Selection))
		}
	}
	// "Delete selected…" with no row ticked (the form posts no names): a
	// 400 saying so, not a preview of every object of the kind.
	for path, form := range map[string]url.Values{"/csidrivers/-/cleanup": {}, "/csrs/-/cleanup": {"state": {"decided"}}} {
		rec := ls.post(t, sess, path, form)
		if doc := postDoc(t, rec); rec.Code != http.StatusBadRequest || !strings.Contains(squash(doc.Selection), "No row was ticked") ||
			doc.Find(`[data-testid="cleanup-form"]`).Length() != 0 {
			t.Errorf("POST %s with nothing ticked: status %d: %.300s", path, rec.Code, squash(doc.Selection))
		}
	}
	// A read-only kind offers no cleanup.
	if code, _, _ := ls.get(t, sess, "/priorityclasses/-/cleanup"); code != http.StatusNotFound {
		t.Errorf("cleanup of a read-only kind: status %d, want 404", code)
	}
}

// TestCleanupRefusedInReadOnlyAndWithoutCSRF: --read-only refuses the preview
// and the confirmation on the server; a confirmation without the session's
// CSRF token is refused; nothing is deleted either way.
func TestCleanupRefusedInReadOnlyAndWithoutCSRF(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	rw := newCleanupServer(t, testcluster.Admin, false)
	rwSess := rw.login(t)
	selector, names := cleanupDrivers(t, cs, 2)
	rw.waitDriversCached(t, cs, names...)
	_, form := rw.previewForm(t, rwSess, "/csidrivers/-/cleanup?selector="+url.QueryEscape(selector))

	// No token: the form as an attacker's page would post it.
	noToken := url.Values{}
	for k, v := range form {
		if k != "_csrf" {
			noToken[k] = v
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/csidrivers/-/cleanup/confirm", strings.NewReader(noToken.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(rwSess)
	if rec := rw.do(r); !refusedForCSRF(rec) {
		t.Errorf("confirmation without CSRF token: status %d, want the CSRF check's 403", rec.Code)
	}

	ro := newCleanupServer(t, testcluster.Admin, true)
	roSess := ro.login(t)
	if code, _, _ := ro.get(t, roSess, "/csidrivers/-/cleanup?selector="+url.QueryEscape(selector)); code != http.StatusForbidden {
		t.Errorf("read-only preview: status %d, want 403", code)
	}
	if rec := ro.post(t, roSess, "/csidrivers/-/cleanup/confirm", form); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only") {
		t.Errorf("read-only confirmation: status %d, want 403 read-only", rec.Code)
	}
	_, list, _ := ro.get(t, roSess, "/csidrivers")
	if list.Find(`[data-testid="cleanup-link"]`).Length() != 0 {
		t.Error("read-only list offers a cleanup")
	}
	if left := driverUIDs(t, cs, names); len(left) != 2 {
		t.Errorf("refused cleanups deleted objects: %v left", left)
	}
}

// TestCleanupOfTickedDecidedCSRs: two of this test's CSRs ticked on the queue,
// one denied; "decided" keeps only the denied one, which is deleted; the
// pending one survives.
func TestCleanupOfTickedDecidedCSRs(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ls := newCleanupServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	pending := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "pending"})
	denied := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "denied"})
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), denied, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "CleanupTest", Message: "for the cleanup test"})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(context.Background(), denied, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to show the denial", 10*time.Second, func() bool {
		c, err := ls.cache.CSR(denied)
		return err == nil && len(c.Status.Conditions) > 0
	})
	ls.waitCached(t, pending)

	_, queue, _ := ls.get(t, sess, "/csrs?state=denied&q=it-testcleanupofticked")
	if queue.Find(`[data-testid="bulk-delete"]`).Length() != 1 {
		t.Fatal(`the queue offers no "Delete selected"`)
	}
	// The pending one ticked too (as a hand-made form could): the state filter leaves it out.
	ticked := url.Values{"names": {ls.uid(t, pending) + "/" + pending, selectionValue(t, queue, denied)}, "state": {"decided"}}
	rec := ls.post(t, sess, "/csrs/-/cleanup", ticked)
	doc := postDoc(t, rec)
	if rec.Code != http.StatusOK || previewCount(t, doc) != 1 || doc.Find(`[data-testid="cleanup-item"][data-name="`+denied+`"]`).Length() != 1 {
		t.Fatalf("preview of ticked decided CSRs: status %d: %s", rec.Code, squash(doc.Selection))
	}
	rec = ls.post(t, sess, "/csrs/-/cleanup/confirm", hiddenFields(doc.Find(`[data-testid="cleanup-form"]`)))
	result := postDoc(t, rec)
	if rec.Code != http.StatusOK || resultCount(result, "deleted") != 1 {
		t.Fatalf("confirm: status %d: %s", rec.Code, squash(result.Selection))
	}
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), denied, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the denied CSR is still there: %v", err)
	}
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), pending, metav1.GetOptions{}); err != nil {
		t.Errorf("the pending CSR was deleted: %v", err)
	}
}
