//go:build integration

package fleet_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/fleet"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// proxyCleanupDrivers is how many drivers the cleanup deletes one by one: the
// most ticked rows one cleanup takes (maxTicked in handlers/cleanup). The console's
// deletions go through a client allowing a burst of 200 requests then 200 a
// second (kube.DeleteQPS, DeleteBurst), so deleting them takes at least
// (1000-200)/200 = 4 s on any machine: twice the proxy's idle timeout.
const proxyCleanupDrivers = 1000

// proxyIdleTimeout is HAProxy's "timeout server" in this test: longer than
// the console's wait before its progress page (500 ms) and its line every
// second, much shorter than the deletions.
const proxyIdleTimeout = 2 * time.Second

// TestLongCleanupThroughAProxyWithAnIdleTimeout confirms a cleanup of 1,000
// ticked CSIDrivers through a real HAProxy that gives up on a console silent
// for 2 s. The console sends its progress page and a line a second, so the
// one response arrives whole: 200, every result, and the drivers are gone.
// A console that answers only at the end gets HAProxy's 504 after 2 s while
// the deletions go on unreported.
func TestLongCleanupThroughAProxyWithAnIdleTimeout(t *testing.T) {
	testcluster.Require(t)
	bin := testcluster.ConsoleBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin := testcluster.RestConfig(t, testcluster.Admin)
	if admin.BearerToken == "" {
		t.Fatal("the devcluster's admin kubeconfig has no bearer token to sign in with")
	}
	fast := rest.CopyConfig(admin)
	fast.QPS, fast.Burst = 200, 400 // the test's own set-up, not the console
	cs := kubernetes.NewForConfigOrDie(fast)

	run := fmt.Sprintf("r%d", time.Now().UnixNano())
	ticks := url.Values{}
	var names []string
	for i := range proxyCleanupDrivers {
		name := fmt.Sprintf("it-proxy-cleanup-%s-%03d.example.com", run, i)
		d, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"clusterdesk-proxy-cleanup-test": run}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		ticks.Add("names", string(d.UID)+"/"+name)
	}
	t.Cleanup(func() {
		for _, n := range names {
			_ = cs.StorageV1().CSIDrivers().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	f, err := fleet.Start(ctx, fleet.Options{
		Binary: bin, Kubeconfig: testcluster.Kubeconfig(t, testcluster.Admin), Replicas: 1, Dir: t.TempDir(),
		Args:          []string{"--auth", "token", "--cleanup-progress-after", "500ms"},
		ServerTimeout: proxyIdleTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	who := signIn(ctx, t, f, admin.BearerToken)
	// The preview straight from the console (its 50 dry runs are not what
	// this test is about), the confirmation through the proxy. The preview
	// counts every ticked driver once the console's cache has them all.
	csrf := getPage(ctx, t, who, f.Replicas[0].URL+"/", "").Find(`meta[name="csrf-token"]`).AttrOr("content", "")
	ticks.Set("_csrf", csrf)
	var preview answer
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		preview = post(ctx, t, who, f.Replicas[0].URL, "/csidrivers/-/cleanup", ticks)
		if preview.status == http.StatusOK && preview.doc.Find(`[data-testid="cleanup-count"]`).AttrOr("data-count", "") == fmt.Sprint(proxyCleanupDrivers) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("preview of the %d ticked drivers: status %d: %s", proxyCleanupDrivers, preview.status, tail(preview.body, 5))
		}
	}
	form := url.Values{}
	preview.doc.Find(`[data-testid="cleanup-form"] input[type="hidden"]`).Each(func(_ int, in *goquery.Selection) {
		form.Add(in.AttrOr("name", ""), in.AttrOr("value", ""))
	})
	form.Set("confirm_count", fmt.Sprint(proxyCleanupDrivers))

	started := time.Now()
	done := post(ctx, t, who, f.URL, "/csidrivers/-/cleanup/confirm", form)
	took := time.Since(started)
	if done.status != http.StatusOK {
		t.Fatalf("confirmation through the proxy: status %d after %s: %s", done.status, took.Round(time.Millisecond), tail(done.body, 5))
	}
	if took < proxyIdleTimeout {
		t.Fatalf("the cleanup took %s, under the proxy's idle timeout: this test proves nothing", took.Round(time.Millisecond))
	}
	if got := done.doc.Find(`[data-testid="cleanup-result-count"][data-result="deleted"]`).AttrOr("data-count", ""); got != fmt.Sprint(proxyCleanupDrivers) {
		t.Errorf("the result says %q deleted, want %d: %s", got, proxyCleanupDrivers, tail(done.body, 5))
	}
	for _, n := range names {
		if _, err := cs.StorageV1().CSIDrivers().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s is still there: %v", n, err)
			break
		}
	}
	t.Logf("%d drivers deleted in %s through a proxy that gives up after %s of silence", proxyCleanupDrivers, took.Round(time.Millisecond), proxyIdleTimeout)
}

type answer struct {
	status int
	body   string
	doc    *goquery.Document
}

// post sends a form as the page does, with the CSRF token in it.
func post(ctx context.Context, t *testing.T, who *user, base, path string, form url.Values) answer {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := who.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s%s: %v", base, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s%s: reading the answer: %v", base, path, err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, body: string(b), doc: doc}
}
