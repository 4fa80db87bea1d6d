//go:build integration

package faults

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// cutFor is how long the console is cut off from the API server: past the
// access-review cache's 30 s, so every answer the pages need must come from
// what the console still holds.
const cutFor = 30 * time.Second

// recoverWithin is how soon after the connection is back the cache, the pages
// and an open event stream must show the truth.
const recoverWithin = 60 * time.Second

// TestConsoleCutOffFromTheAPIServer cuts the console's connection to the API
// server for 30 s mid-session (a loopback proxy between the console and the
// API server refuses connections and breaks the open ones), while another
// client keeps writing to the API server directly. Meanwhile pages serve the
// cached objects with the stale banner, and writes (a CSR approval, an editor
// apply) fail saying the cluster cannot be reached, with nothing written.
// Within 60 s of the connection coming back, without restarting the console,
// the cache, the pages and the event stream that stayed open show every change
// the other client made during the cut.
func TestConsoleCutOffFromTheAPIServer(t *testing.T) {
	testcluster.Require(t)
	other := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	proxy := testcluster.NewProxy(t)
	c := startConsole(t, proxy.Config(t, testcluster.Admin))

	before := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "before", Client: other})
	gone := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "gone", Client: other})
	approved := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "approved", Client: other})
	driver := createCSIDriver(t, other)
	c.waitCached(t, before, gone, approved)
	// A decision carries the UID of the CSR as shown; without one it is a 400,
	// which would hide what this test is after (the unreachable answer).
	shown, err := c.cache.CSR(before)
	if err != nil {
		t.Fatal(err)
	}
	beforeUID := string(shown.UID)
	poll(t, "the cache to hold the CSIDriver", 30*time.Second, func() bool { _, err := c.cache.CSIDriver(driver); return err == nil })
	if code, doc := c.get(t, "/csrs"); code != http.StatusOK || !strings.Contains(doc.Text(), before) || doc.Find(`[data-testid="banner-stale"]`).Length() != 0 {
		t.Fatalf("before the cut: /csrs status %d, lists %s: %v, stale banner: %d", code, before,
			strings.Contains(doc.Text(), before), doc.Find(`[data-testid="banner-stale"]`).Length())
	}
	// An editor opened before the cut, applied during it.
	form, applyURL := c.editorForm(t, "/csidrivers/"+driver)
	form.Set("yaml", strings.Replace(form.Get("yaml"), "metadata:\n", "metadata:\n  labels:\n    faults: during-the-cut\n", 1))
	events := c.subscribe(t, "/csrs")
	await(t, events, 10*time.Second, "the hello event", func(ev sseclient.Event) bool { return ev.Event == "hello" })

	t0 := time.Now()
	proxy.Cut()
	restored := false
	t.Cleanup(func() {
		if !restored {
			proxy.Restore(t)
		}
	})

	// The console notices: a relist fails and the stale notice comes.
	poll(t, "the CSR cache to report the lost watch", 30*time.Second, func() bool {
		st := c.cache.Status(kube.CSRs)
		return st.State == kube.StateError && st.Err != nil && !st.SyncedAt.IsZero()
	})
	await(t, events, 10*time.Second, "a stale banner on the open stream", func(ev sseclient.Event) bool {
		return ev.Event == "status" && strings.Contains(ev.Data, "banner-stale")
	})

	// Another client changes the cluster during the cut.
	during := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "during", Client: other})
	if err := other.CertificatesV1().CertificateSigningRequests().Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	approve(t, other, approved)

	// Pages are read at the end of the cut too, when every access answer the
	// console had cached has expired.
	checkPagesDuringCut := func(when string) {
		code, doc := c.get(t, "/csrs")
		banner := doc.Find(`[data-testid="banner-stale"]`)
		if code != http.StatusOK || banner.Length() == 0 || !strings.Contains(doc.Text(), before) || strings.Contains(doc.Text(), during) {
			t.Errorf("%s: /csrs answered %d, stale banner %d, lists %s: %v, lists %s (created during the cut): %v\n%s", when, code,
				banner.Length(), before, strings.Contains(doc.Text(), before), during, strings.Contains(doc.Text(), during), text(doc))
		}
		if code, doc := c.get(t, "/csrs/"+before); code != http.StatusOK || !strings.Contains(doc.Text(), before) {
			t.Errorf("%s: the CSR's page answered %d: %s", when, code, text(doc))
		}
		if code, doc := c.get(t, "/csidrivers/"+driver); code != http.StatusOK || doc.Find(`[data-testid="banner-stale"]`).Length() == 0 {
			t.Errorf("%s: the CSIDriver's page answered %d: %s", when, code, text(doc))
		}
	}
	checkPagesDuringCut("early in the cut")

	// Writes fail with a clear message, and write nothing (checked after the cut).
	unreachable := func(what string, code int, body string) {
		low := strings.ToLower(body)
		if code < 500 || !(strings.Contains(low, "cannot reach") || strings.Contains(low, "unreachable") || strings.Contains(low, "could not reach")) {
			t.Errorf("%s during the cut: status %d; want a 5xx saying the cluster cannot be reached, got: %s", what, code, body)
		}
	}
	code, doc := c.post(t, "/csrs/"+before+"/approve", url.Values{"uid": {beforeUID}, "message": {"during the cut"}})
	unreachable("approve", code, text(doc))
	code, doc = c.post(t, "/csrs/bulk", url.Values{"action": {"approve"}, "names": {beforeUID + "/" + before}, "message": {"during the cut"}})
	unreachable("bulk approve", code, text(doc))
	code, doc = c.post(t, applyURL, form)
	unreachable("editor apply", code, text(doc))
	if code, doc := c.post(t, applyURL, form); !strings.Contains(doc.Find(`textarea[name="yaml"]`).Text(), "during-the-cut") {
		t.Errorf("editor apply during the cut (%d) lost the user's text", code)
	}

	time.Sleep(time.Until(t0.Add(cutFor - 2*time.Second)))
	checkPagesDuringCut("at the end of the cut")
	time.Sleep(time.Until(t0.Add(cutFor)))
	proxy.Restore(t)
	restored = true
	back := time.Now()
	t.Logf("the console was cut off for %s", back.Sub(t0).Round(100*time.Millisecond))

	// The cache converges on the truth.
	poll(t, "the cache to show every change made during the cut", recoverWithin, func() bool {
		_, errDuring := c.cache.CSR(during)
		_, errGone := c.cache.CSR(gone)
		a, errApproved := c.cache.CSR(approved)
		return errDuring == nil && apierrors.IsNotFound(errGone) && errApproved == nil && isApproved(a)
	})
	poll(t, "every kind's watch to be back", recoverWithin-time.Since(back), func() bool {
		for _, k := range c.cache.Statuses() {
			if k.State != kube.StateSynced && k.State != kube.StateForbidden {
				return false
			}
		}
		return true
	})
	t.Logf("cache converged %s after the connection came back", time.Since(back).Round(100*time.Millisecond))

	// The stream that stayed open clears the banner and has the page show the
	// new state: the changed rows, or a resync after which the page fetches it.
	awaitAll(t, events, recoverWithin-time.Since(back), map[string]func(sseclient.Event) bool{
		"the stale banner's removal": func(ev sseclient.Event) bool {
			return ev.Event == "status" && !strings.Contains(ev.Data, "banner-stale")
		},
		"the change made during the cut": func(ev sseclient.Event) bool {
			return (ev.Event == "resync" && ev.Data == "csrs-rows") || (ev.Event == "csrs-rows" && strings.Contains(ev.Data, during))
		},
	})

	// Pages show the truth.
	code, doc = c.get(t, "/csrs")
	if page := doc.Text(); code != http.StatusOK || !strings.Contains(page, during) || strings.Contains(page, gone) || doc.Find(`[data-testid="banner-stale"]`).Length() != 0 {
		t.Errorf("after the cut: /csrs answered %d; lists %s: %v, lists deleted %s: %v, stale banner: %d", code,
			during, strings.Contains(page, during), gone, strings.Contains(page, gone), doc.Find(`[data-testid="banner-stale"]`).Length())
	}
	if code, doc := c.get(t, "/csrs/"+approved); code != http.StatusOK || !strings.Contains(doc.Text(), "Approved") {
		t.Errorf("after the cut: the CSR approved during it shows as: %d %s", code, text(doc))
	}
	t.Logf("pages and stream converged %s after the connection came back", time.Since(back).Round(100*time.Millisecond))

	// Nothing of the failed writes was written.
	got, err := other.CertificatesV1().CertificateSigningRequests().Get(ctx, before, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 0 {
		t.Errorf("the approval that failed left conditions behind: %+v", got.Status.Conditions)
	}
	d, err := other.StorageV1().CSIDrivers().Get(ctx, driver, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Labels["faults"]; ok {
		t.Errorf("the editor apply that failed changed the CSIDriver: labels %v", d.Labels)
	}
	// And the same writes now succeed.
	if code, doc := c.post(t, "/csrs/"+before+"/approve", url.Values{"uid": {beforeUID}, "message": {"after the cut"}}); code != http.StatusSeeOther {
		t.Errorf("approve after the cut: status %d: %s", code, text(doc))
	}
	if code, doc := c.post(t, applyURL, form); code != http.StatusSeeOther {
		t.Errorf("editor apply after the cut: status %d: %s", code, text(doc))
	}
}

func approve(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "FaultsTest", Message: "approved by another client",
	})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func isApproved(csr *certificatesv1.CertificateSigningRequest) bool {
	return slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved
	})
}

// createCSIDriver creates a CSIDriver as another client than the console,
// deleted when the test ends.
func createCSIDriver(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + ".faults.clusterdesk.dev"
	_, err := cs.StorageV1().CSIDrivers().Create(context.Background(), &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}
