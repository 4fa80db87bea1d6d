//go:build integration

package ingest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// webhookUnderTest serves a receiver with the key material of ready.json:
// as the devcluster API server's audit webhook backend (at ready.json's
// address) when asAPIServers, else on a port of its own, where the test is
// the only sender (the API server's own batches would take slots and add
// entries).
func webhookUnderTest(t *testing.T, store ledger.Store, o Options, asAPIServers bool) (*Receiver, testcluster.AuditWebhook) {
	t.Helper()
	w := testcluster.RequireAuditWebhook(t)
	if !asAPIServers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		w.Listen = l.Addr().String()
		l.Close()
	}
	pem, err := os.ReadFile(w.ClientCAFile)
	if err != nil {
		t.Fatal(err)
	}
	o.Store = store
	o.Senders.ClientCAs = x509.NewCertPool()
	o.Senders.ClientCAs.AppendCertsFromPEM(pem)
	rc, err := NewReceiver(o)
	if err != nil {
		t.Fatal(err)
	}
	var srv *Server
	// The previous test's listener may still be closing.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if srv, err = Listen(w.Listen, w.CertFile, w.KeyFile, rc, nil); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen on the devcluster's audit webhook address: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return rc, w
}

// senderClient is an HTTPS client trusting the devcluster CA, presenting
// the client pair certFile/keyFile when given.
func senderClient(t *testing.T, certFile, keyFile string) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(os.Getenv(testcluster.EnvDir), "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: roots}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, MaxConnsPerHost: 0}, Timeout: 30 * time.Second}
}

func postTo(t *testing.T, c *http.Client, addr string, body []byte) int {
	t.Helper()
	resp, err := c.Post("https://"+addr+"/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitEntry waits until the store holds an entry that match accepts.
func waitEntry(t *testing.T, store ledger.Store, what string, match func(ledger.Entry) bool) ledger.Entry {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var found *ledger.Entry
		n := 0
		if err := store.Export(context.Background(), ledger.Query{}, func(e ledger.Entry) error {
			n++
			if found == nil && match(e) {
				found = &e
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if found != nil {
			return *found
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the ledger after 60 s (%d entries)", what, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sqliteLedger is the real embedded ledger in a temporary file.
func sqliteLedger(t *testing.T) ledger.Store {
	t.Helper()
	store, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func decide(t *testing.T, cs kubernetes.Interface, name string, typ certificatesv1.RequestConditionType, reason, message string) {
	t.Helper()
	ctx := context.Background()
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: message,
	})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Decisions made outside the console, with a plain client as kubectl makes
// them, reach the ledger through the API server's audit webhook with who
// made them and why; so does the controller manager's certificate.
func TestWebhookRecordsDecisionsMadeWithAPlainClient(t *testing.T) {
	store := sqliteLedger(t)
	rc, _ := webhookUnderTest(t, store, Options{}, true)
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	approver := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Approver))
	approved := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "approved"})
	denied := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "denied"})
	decide(t, admin, approved, certificatesv1.CertificateApproved, "KubectlApprove", "ticket OPS-7")
	decide(t, approver, denied, certificatesv1.CertificateDenied, "NotOurs", "unknown team")

	approve := waitEntry(t, store, "approval", func(e ledger.Entry) bool { return e.Name == approved && e.Action == ledger.ActionApprove })
	if approve.User != testcluster.Admin || approve.Reason != "KubectlApprove: ticket OPS-7" || approve.Result != ledger.ResultOK ||
		approve.Signer != certificatesv1.KubeAPIServerClientSignerName || approve.Kind != "csrs" || approve.UID == "" || approve.Source != ledger.SourceAPIServer {
		t.Errorf("approval: %+v", approve)
	}
	deny := waitEntry(t, store, "denial", func(e ledger.Entry) bool { return e.Name == denied && e.Action == ledger.ActionDeny })
	if deny.User != testcluster.Approver || deny.Reason != "NotOurs: unknown team" || deny.Result != ledger.ResultOK {
		t.Errorf("denial: %+v", deny)
	}
	issue := waitEntry(t, store, "issue", func(e ledger.Entry) bool { return e.Name == approved && e.Action == ledger.ActionIssue })
	// The issue has no reason of its own: its object still carries the
	// approval's condition, which is the approval's reason, not the issue's.
	if issue.User != "system:serviceaccount:kube-system:certificate-controller" || len(issue.Object) == 0 || issue.Reason != "" {
		t.Errorf("issue: user %q, object %d bytes, reason %q (want none)", issue.User, len(issue.Object), issue.Reason)
	}
	waitEntry(t, store, "creation", func(e ledger.Entry) bool { return e.Name == approved && e.Action == ledger.ActionCreate })
	if c := rc.Counts(); c.Refused[RefusedUnauthenticated] != 0 || c.Stored == 0 {
		t.Errorf("counts: %+v", c)
	}
}

// The same EventList posted twice is stored once (the API server retries a
// batch whose answer it did not get).
func TestWebhookStoresARetriedBatchOnce(t *testing.T) {
	store := sqliteLedger(t)
	_, w := webhookUnderTest(t, store, Options{}, false)
	c := senderClient(t, w.ClientCertFile, w.ClientKeyFile)
	body := eventsBody(t)
	for i := range 2 {
		if code := postTo(t, c, w.Listen, body); code != http.StatusOK {
			t.Fatalf("post %d: %d", i, code)
		}
	}
	n := 0
	if err := store.Export(context.Background(), ledger.Query{Source: ledger.SourceAPIServer}, func(e ledger.Entry) error {
		if e.AuditID == "50660f61-79bc-4144-a25b-5f8e9a65a73a" {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the approval is stored %d times, want once", n)
	}
}

// Only the API server may write the ledger: no client certificate, one from
// the cluster CA (which signs every approved CSR), a made-up bearer token:
// 401, nothing stored. A body over the limit is 413.
func TestWebhookRefusesOthers(t *testing.T) {
	store := newMemStore()
	rc, w := webhookUnderTest(t, store, Options{MaxBody: 1 << 20}, false)
	dir := os.Getenv(testcluster.EnvDir)
	body := eventsBody(t)
	for _, tc := range []struct {
		name string
		c    *http.Client
	}{
		{"no client certificate", senderClient(t, "", "")},
		{"a certificate from the cluster CA", senderClient(t, filepath.Join(dir, "pki", "controller-manager.crt"), filepath.Join(dir, "pki", "controller-manager.key"))},
	} {
		if code := postTo(t, tc.c, w.Listen, body); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", tc.name, code)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "https://"+w.Listen+"/", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer made-up-token-of-somebody")
	if resp, err := senderClient(t, "", "").Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a made-up token: %v %v, want 401", resp, err)
	}
	if len(store.all()) != 0 || rc.Counts().Refused[RefusedUnauthenticated] != 3 {
		t.Errorf("stored %d entries, refused %v", len(store.all()), rc.Counts().Refused)
	}
	big := append(bytes.Repeat([]byte(" "), 1<<20), body...)
	if code := postTo(t, senderClient(t, w.ClientCertFile, w.ClientKeyFile), w.Listen, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: %d, want 413", code)
	}
}

// A flood beyond the batches in flight gets 429 at once, and the heap stays
// bounded by the batches in flight, not by the flood.
func TestWebhookFloodIsRefusedWithBoundedMemory(t *testing.T) {
	store := newMemStore()
	store.gate = make(chan struct{}) // the ledger is slow: every Append waits
	const inFlight, flood = 4, 200
	rc, w := webhookUnderTest(t, store, Options{InFlight: inFlight}, false)
	// A batch of 400 CSR approval events as captured (about 1.2 MiB).
	batch := floodBatch(t, 400)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	c := senderClient(t, w.ClientCertFile, w.ClientKeyFile)
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = flood
	var wg sync.WaitGroup
	codes := make(chan int, flood)
	var mu sync.Mutex
	var failures []error
	for range flood {
		wg.Go(func() {
			resp, err := c.Post("https://"+w.Listen+"/", "application/json", bytes.NewReader(batch))
			if err != nil {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	deadline := time.Now().Add(60 * time.Second)
	for rc.Counts().Refused[RefusedBusy] < flood-inFlight && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	during := heap()
	close(store.gate)
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	t.Logf("flood of %d batches of %d KiB, %d in flight: answers %v; heap after GC %d KiB before, %d KiB during (%+d KiB)",
		flood, len(batch)>>10, inFlight, count, before>>10, during>>10, (int64(during)-int64(before))>>10)
	// A refused sender may see its connection reset instead of the 429: the
	// webhook answers without reading the 1.2 MiB body and closes, and a
	// client still writing it can lose the answer to the reset (4 in 200 on
	// CI's loaded cores). The webhook's own count says each was refused, and
	// no sender got any other answer; the API server retries either way.
	for _, err := range failures {
		t.Logf("a sender got no answer: %v", err)
	}
	if refused := rc.Counts().Refused[RefusedBusy]; count[http.StatusOK] != inFlight || count[http.StatusTooManyRequests]+count[0] != flood-inFlight || refused != flood-inFlight {
		t.Errorf("answers %v (0: no answer), %d refused as busy; want %d × 200 and %d refused, each a 429 or no answer", count, refused, inFlight, flood-inFlight)
	}
	// The batches in flight hold their bodies and decoded events (about 2×
	// each); the refused ones hold nothing.
	if limit := uint64(inFlight*3*len(batch)) + 16<<20; during > before+limit {
		t.Errorf("heap grew by %d KiB during the flood, want under %d KiB", (during-before)>>10, limit>>10)
	}
}

// floodBatch is an EventList of n CSR approval events (distinct audit IDs),
// made from the captured one.
func floodBatch(t *testing.T, n int) []byte {
	t.Helper()
	list := readEvents(t)
	var approval []byte
	for _, ev := range list.Items {
		if ev.AuditID == "50660f61-79bc-4144-a25b-5f8e9a65a73a" {
			approval = mustJSON(t, ev)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.Replace(approval, []byte("50660f61-79bc-4144-a25b-5f8e9a65a73a"), fmt.Appendf(nil, "flood-%08d-0000-0000-0000-000000000000", i), 1))
	}
	b.WriteString("]}")
	return b.Bytes()
}
