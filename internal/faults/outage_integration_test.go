//go:build integration

package faults

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/handlers"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// outage is how long after stopping the API server the test starts it again:
// long enough for every informer to lose its watch and fail a relist. Its
// start takes 2 s on an idle machine and up to 9 s on a loaded one, so the
// shared test cluster is down for about 8 to 15 s.
const outage = 6 * time.Second

// TestAPIServerOutage stops kube-apiserver mid-session and starts it again on
// the same port. While it is down, pages keep serving the cached objects (200)
// and say the data is stale with the cache's error; a CSR approval fails with
// a message saying the cluster cannot be reached and writes nothing. After the
// restart the cache converges without restarting the console: a CSR another
// client creates then shows up, the stale notice goes, and the approval that
// failed now succeeds.
func TestAPIServerOutage(t *testing.T) {
	state := testcluster.Require(t)
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	other := kubernetes.NewForConfigOrDie(cfg) // "another client": not the console's
	ctx := context.Background()
	if !apiserverUp(ctx, other) {
		t.Fatal("the API server is not ready before the test")
	}
	if err := syscall.Kill(state.PID, 0); err != nil {
		t.Fatalf("devcluster pid %d from ready.json: %v", state.PID, err)
	}

	before := createCSR(t, other, "before")
	c := startConsole(t)
	c.waitCached(t, before)
	if code, doc := c.get(t, "/csrs"); code != http.StatusOK || !strings.Contains(doc.Text(), before) || doc.Find(`[data-testid="banner-stale"]`).Length() != 0 {
		t.Fatalf("before the outage: /csrs status %d, lists %s: %v, stale banner: %d", code, before,
			strings.Contains(doc.Text(), before), doc.Find(`[data-testid="banner-stale"]`).Length())
	}

	// Registered after the CSRs' deletes, so it runs before them: whatever
	// happens below, the shared cluster is up again when the test ends.
	stopped := false
	t.Cleanup(func() {
		if stopped {
			restart(t, state.PID, other)
		}
	})
	t0 := time.Now()
	if err := syscall.Kill(state.PID, syscall.SIGUSR1); err != nil {
		t.Fatalf("stop kube-apiserver: %v", err)
	}
	stopped = true
	poll(t, "the API server to go down", 5*time.Second, func() bool { return !apiserverUp(ctx, other) })

	// The console notices: the CSR informer's relist fails, and the hub
	// renders the stale notice pages include.
	var st kube.KindStatus
	poll(t, "the CSR cache to report the lost watch", 8*time.Second, func() bool {
		st = c.cache.Status(kube.CSRs)
		return st.State == kube.StateError && st.Err != nil && !st.SyncedAt.IsZero()
	})
	poll(t, "/csrs to show the cached CSRs with the stale notice and the cache's error", 5*time.Second, func() bool {
		code, doc := c.get(t, "/csrs")
		banner := doc.Find(`[data-testid="banner-stale"]`).Text()
		// The notice quotes the error of one of the kinds whose watch is lost.
		quoted := false
		for _, k := range c.cache.Statuses() {
			quoted = quoted || (k.Err != nil && strings.Contains(banner, k.Err.Error()))
		}
		return code == http.StatusOK && strings.Contains(doc.Text(), before) && quoted
	})
	if code, doc := c.get(t, "/csrs/"+before); code != http.StatusOK || !strings.Contains(doc.Text(), before) {
		t.Errorf("during the outage: the CSR's page answered %d", code)
	}

	rec := c.post(t, "/csrs/"+before+"/approve", url.Values{"message": {"during the outage"}})
	body := strings.ToLower(rec.Body.String())
	if rec.Code < 500 || !(strings.Contains(body, "unreachable") || strings.Contains(body, "cannot reach") || strings.Contains(body, "could not reach")) {
		t.Errorf("approve during the outage: status %d; want a 5xx saying the cluster cannot be reached, got:\n%s", rec.Code, pageText(t, rec.Body.String()))
	}

	// The outage lasts its full length, then the API server comes back.
	time.Sleep(time.Until(t0.Add(outage)))
	if err := syscall.Kill(state.PID, syscall.SIGUSR2); err != nil {
		t.Fatalf("start kube-apiserver: %v", err)
	}
	poll(t, "the API server to be ready again", 60*time.Second, func() bool { return apiserverUp(ctx, other) })
	stopped = false
	t.Logf("the API server was down for %s", time.Since(t0).Round(100*time.Millisecond))

	// Nothing of the failed approval was written.
	got, err := other.CertificatesV1().CertificateSigningRequests().Get(ctx, before, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 0 {
		t.Errorf("the approval that failed left conditions behind: %+v", got.Status.Conditions)
	}

	after := createCSR(t, other, "after")
	poll(t, "the console's cache to converge (a CSR created after the restart, the watch back)", 60*time.Second, func() bool {
		_, err := c.cache.CSR(after)
		st := c.cache.Status(kube.CSRs)
		return err == nil && st.State == kube.StateSynced && st.Err == nil
	})
	poll(t, "/csrs to list the new CSR without the stale notice", 10*time.Second, func() bool {
		code, doc := c.get(t, "/csrs")
		return code == http.StatusOK && strings.Contains(doc.Text(), after) && doc.Find(`[data-testid="banner-stale"]`).Length() == 0
	})
	for _, k := range c.cache.Statuses() {
		if k.State == kube.StateError {
			t.Errorf("after recovery %s is still in error: %v", k.Kind.ID, k.Err)
		}
	}
	if rec := c.post(t, "/csrs/"+before+"/approve", url.Values{"message": {"after the outage"}}); rec.Code != http.StatusSeeOther {
		t.Errorf("approve after the outage: status %d:\n%s", rec.Code, pageText(t, rec.Body.String()))
	}
}

// console is the console's handlers on a cache of its own, wired as
// cmd/clusterdesk wires them (the live hub renders the stale notice), with a
// signed-in session.
type console struct {
	h       http.Handler
	cache   *kube.Cache
	cookies []*http.Cookie
}

func startConsole(t *testing.T) *console {
	t.Helper()
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache, err := kube.NewCache(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	access, err := kube.NewAccess(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writer, err := kube.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	streams := live.NewStreams(live.Options{Log: log})
	updates := handlers.NewLiveUpdates(cache, streams)
	hub := live.NewHub(updates.Render, streams, live.HubOptions{Log: log})
	cache.OnChange(hub.Notify)
	go hub.Run(ctx)
	go cache.Run(ctx)
	t.Cleanup(func() {
		cancel()
		streams.Close()
	})
	poll(t, "the console's cache to sync", 60*time.Second, cache.Ready)

	var token string
	c := &console{cache: cache}
	c.h = handlers.New(handlers.Deps{
		Log: log, Cluster: cache, Access: access, Writer: writer,
		Sessions: auth.NewSessions(), Logins: auth.NewLoginTokens(func(tok string) { token = tok }),
		User: testcluster.Admin, Live: updates,
	})
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login?token="+url.QueryEscape(token), nil))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("login: status %d", rec.Code)
	}
	c.cookies = rec.Result().Cookies()
	return c
}

func (c *console) do(r *http.Request) *httptest.ResponseRecorder {
	for _, k := range c.cookies {
		r.AddCookie(k)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	return rec
}

func (c *console) get(t *testing.T, path string) (int, *goquery.Document) {
	t.Helper()
	rec := c.do(httptest.NewRequest(http.MethodGet, path, nil))
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, doc
}

// post sends a form as the browser does from a clusterdesk page (same origin).
func (c *console) post(t *testing.T, path string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	return c.do(r)
}

func (c *console) waitCached(t *testing.T, name string) {
	t.Helper()
	poll(t, "the console's cache to hold "+name, 30*time.Second, func() bool { _, err := c.cache.CSR(name); return err == nil })
}

// pageText is the visible text of an HTML answer, for failure messages.
func pageText(t *testing.T, html string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		return html
	}
	return strings.Join(strings.Fields(doc.Find("main").Text()), " ")
}

// apiserverUp reports whether the API server answers /readyz with ok.
func apiserverUp(ctx context.Context, cs kubernetes.Interface) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && strings.TrimSpace(string(body)) == "ok"
}

// restart starts the API server again after a failed test and waits until it
// is ready, so the tests after this one find the cluster as they expect.
func restart(t *testing.T, pid int, cs kubernetes.Interface) {
	ctx := context.Background()
	if apiserverUp(ctx, cs) {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
		t.Errorf("start kube-apiserver again (pid %d): %v", pid, err)
		return
	}
	for deadline := time.Now().Add(90 * time.Second); !apiserverUp(ctx, cs); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("THE SHARED DEVCLUSTER IS DOWN: kube-apiserver not ready 90 s after SIGUSR2 to pid %d", pid)
			return
		}
	}
}

// createCSR creates a pending kube-apiserver-client CSR as another client
// than the console, deleted when the test ends.
func createCSR(t *testing.T, cs kubernetes.Interface, what string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "faults-" + what}}, key)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("faults-outage-%s-%d", what, time.Now().UnixNano())
	_, err = cs.CertificatesV1().CertificateSigningRequests().Create(context.Background(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// poll checks cond until it holds or d passes.
func poll(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, what)
		}
	}
}
