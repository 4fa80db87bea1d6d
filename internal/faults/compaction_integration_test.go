//go:build integration

package faults

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestWatchesExpireAfterCompaction makes the API server answer the console's
// watches with 410 Gone and shows the console recovers by itself. The API
// server is stopped; meanwhile another writer changes etcd directly (a CSR
// created, one deleted) and etcd is compacted at its newest revision. When the
// API server starts again, its watch cache begins at that revision, so every
// watch the console resumes from the resource version it had reached is "too
// old" (410 Gone): the informers must relist. Within 60 s the cache, the pages
// and the event stream that stayed open show both changes.
func TestWatchesExpireAfterCompaction(t *testing.T) {
	state := testcluster.Require(t)
	other := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	if !apiserverUp(ctx, other) {
		t.Fatal("the API server is not ready before the test")
	}
	c := startConsole(t, testcluster.RestConfig(t, testcluster.Admin))
	before := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "before", Client: other})
	gone := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "gone", Client: other})
	c.waitCached(t, before, gone)
	events := c.subscribe(t, "/csrs")
	await(t, events, 10*time.Second, "the hello event", func(ev sseclient.Event) bool { return ev.Event == "hello" })
	// Where the console's CSR watch had got to: a resume from here must be refused after the compaction.
	cached, err := c.cache.CSR(gone)
	if err != nil {
		t.Fatalf("the console's cache lost %s: %v", gone, err)
	}
	resumeFrom := cached.ResourceVersion

	stopped := false
	t.Cleanup(func() {
		if stopped {
			restart(t, state.PID, other)
		}
	})
	if err := syscall.Kill(state.PID, syscall.SIGUSR1); err != nil {
		t.Fatalf("stop kube-apiserver: %v", err)
	}
	stopped = true
	poll(t, "the API server to go down", 30*time.Second, func() bool { return !apiserverUp(ctx, other) })

	// Another writer, straight to etcd, while the API server is down.
	during := strings.Replace(gone, "-gone-", "-during-", 1)
	testcluster.EtcdPut(t, csrKey(during), csrJSON(t, during))
	t.Cleanup(func() {
		_ = other.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), during, metav1.DeleteOptions{})
	})
	testcluster.EtcdDelete(t, csrKey(gone))
	rev := testcluster.Compact(t)
	t.Logf("etcd compacted at revision %d", rev)

	if err := syscall.Kill(state.PID, syscall.SIGUSR2); err != nil {
		t.Fatalf("start kube-apiserver: %v", err)
	}
	poll(t, "the API server to be ready again", 90*time.Second, func() bool { return apiserverUp(ctx, other) })
	stopped = false
	back := time.Now()

	poll(t, "the cache to show the changes made in etcd", recoverWithin, func() bool {
		_, errDuring := c.cache.CSR(during)
		_, errGone := c.cache.CSR(gone)
		return errDuring == nil && apierrors.IsNotFound(errGone)
	})
	poll(t, "every kind's watch to be back", recoverWithin-time.Since(back), func() bool {
		for _, k := range c.cache.Statuses() {
			if k.State != kube.StateSynced && k.State != kube.StateForbidden {
				return false
			}
		}
		return true
	})
	t.Logf("cache converged %s after the API server came back", time.Since(back).Round(100*time.Millisecond))
	// The fault is real: the API server refuses to resume a watch from where
	// the console's CSR watch was before the outage (410 Gone).
	if code, msg := watchFrom(ctx, other, resumeFrom); code != http.StatusGone {
		t.Errorf("a CSR watch from resourceVersion %s after the compaction got %d (%s), not 410 Gone: the fault was not forced", resumeFrom, code, msg)
	}
	// Whether client-go met that 410 itself or relisted first depends on its
	// retry timing; its debug log says which, for the record.
	for _, l := range c.logs.matching("Watch closed", "too old resource version") {
		t.Log(l)
	}

	awaitAll(t, events, recoverWithin-time.Since(back), map[string]func(sseclient.Event) bool{
		"the stale banner's removal": func(ev sseclient.Event) bool {
			return ev.Event == "status" && !strings.Contains(ev.Data, "banner-stale")
		},
		"the changes made during the outage": func(ev sseclient.Event) bool {
			return (ev.Event == "resync" && ev.Data == "csrs-rows") || (ev.Event == "csrs-rows" && strings.Contains(ev.Data, during))
		},
	})
	code, doc := c.get(t, "/csrs")
	if page := doc.Text(); code != http.StatusOK || !strings.Contains(page, during) || strings.Contains(page, gone) || doc.Find(`[data-testid="banner-stale"]`).Length() != 0 {
		t.Errorf("after the outage: /csrs answered %d; lists %s: %v, lists deleted %s: %v, stale banner: %d", code,
			during, strings.Contains(page, during), gone, strings.Contains(page, gone), doc.Find(`[data-testid="banner-stale"]`).Length())
	}
}

// watchFrom opens a CSR watch at resourceVersion rv and returns the status it
// ends with at once: 410 when rv is older than what the API server still has,
// 200 when the watch is accepted.
func watchFrom(ctx context.Context, cs kubernetes.Interface, rv string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	w, err := cs.CertificatesV1().CertificateSigningRequests().Watch(ctx, metav1.ListOptions{ResourceVersion: rv, TimeoutSeconds: ptrInt64(5)})
	if err != nil {
		if s, ok := err.(apierrors.APIStatus); ok {
			return int(s.Status().Code), s.Status().Message
		}
		return 0, err.Error()
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			st := apierrors.FromObject(ev.Object)
			if s, ok := st.(apierrors.APIStatus); ok {
				return int(s.Status().Code), s.Status().Message
			}
			return 0, st.Error()
		}
		// An ADDED/MODIFIED event means the server replays history from rv.
		return http.StatusOK, "the watch replayed events from " + rv
	}
	return http.StatusOK, "the watch was accepted"
}

func ptrInt64(v int64) *int64 { return &v }

// csrKey is where the API server keeps a CSR in etcd.
func csrKey(name string) string { return "/registry/certificatesigningrequests/" + name }

// csrJSON is a valid pending CSR as the API server would store it.
func csrJSON(t *testing.T, name string) []byte {
	t.Helper()
	b, err := json.Marshal(certificatesv1.CertificateSigningRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(uuid.NewUUID()),
			CreationTimestamp: metav1.NewTime(time.Now().Truncate(time.Second)),
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    testcluster.CSRRequest(t, testcluster.CSR{CommonName: "faults-etcd-writer"}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
			Username:   "etcd-writer",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
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
