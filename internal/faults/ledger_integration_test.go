//go:build integration

package faults

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/handlers"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// The ledger's PostgreSQL goes away: the audit webhook answers 503 (the API
// server retries the batch), /readyz says the ledger is unreachable and
// stays ready, and the console's pages and a CSR approval through it still
// work: the decision is the API server's.
func TestLedgerDatabaseDown(t *testing.T) {
	testcluster.Require(t)
	store, _, stopPostgres := testfixtures.PostgresLedger(t)

	// The webhook, as cmd/clusterdesk serves it, on a port of its own.
	w := testcluster.RequireAuditWebhook(t)
	pem, err := os.ReadFile(w.ClientCAFile)
	if err != nil {
		t.Fatal(err)
	}
	senders := ingest.Senders{ClientCAs: x509.NewCertPool()}
	senders.ClientCAs.AppendCertsFromPEM(pem)
	rc, err := ingest.NewReceiver(ingest.Options{Store: store, Senders: senders})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv, err := ingest.Listen(addr, w.CertFile, w.KeyFile, rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go srv.Serve(ctx)

	// The console's own records go to the ledger as cmd/clusterdesk wires them.
	recorder := audit.New(audit.Options{})
	feed := ingest.NewConsoleFeed(store, 0, nil)
	recorder.OnRecord(feed.Record)
	go feed.Run(ctx)
	c := startConsole(t, testcluster.RestConfig(t, testcluster.Admin), func(d *handlers.Deps) {
		d.Ledger, d.Audit = store, recorder
	})
	other := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "ledger-down", Client: other})
	c.waitCached(t, name)
	shown, err := c.cache.CSR(name)
	if err != nil {
		t.Fatal(err)
	}

	post := func() int {
		t.Helper()
		ca, _ := os.ReadFile(filepath.Join(os.Getenv(testcluster.EnvDir), "pki", "ca.crt"))
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca)
		pair, err := tls.LoadX509KeyPair(w.ClientCertFile, w.ClientKeyFile)
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}}}
		body := []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[{"level":"Metadata","auditID":"ledger-down-1","stage":"ResponseComplete","requestURI":"/apis/storage.k8s.io/v1/csidrivers","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"csidrivers","name":"x","apiGroup":"storage.k8s.io","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-28T13:00:00.000000Z","stageTimestamp":"2026-11-28T13:00:00.000000Z"}]}`)
		resp, err := client.Post("https://"+addr+"/", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(); code != http.StatusOK {
		t.Fatalf("with the database up the webhook answers %d", code)
	}

	if err := stopPostgres(); err != nil {
		t.Fatal(err)
	}

	if code := post(); code != http.StatusServiceUnavailable {
		t.Errorf("with the database down the webhook answers %d, want 503 (the API server retries it)", code)
	}
	resp, err := c.client.Get(c.srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), "ledger: unreachable") {
		t.Errorf("/readyz with the database down: %d %q, want 200 saying the ledger is unreachable", resp.StatusCode, body.String())
	}
	if code, doc := c.get(t, "/csrs"); code != http.StatusOK || !strings.Contains(doc.Text(), name) {
		t.Errorf("the CSR queue with the database down: %d, lists %s: %v", code, name, strings.Contains(doc.Text(), name))
	}
	if code, doc := c.post(t, "/csrs/"+name+"/approve", url.Values{"uid": {string(shown.UID)}, "message": {"while the ledger is down"}}); code != http.StatusSeeOther {
		t.Errorf("an approval with the database down: %d %s", code, text(doc))
	}
	poll(t, "the approval in the cluster", 30*time.Second, func() bool {
		csr, err := other.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range csr.Status.Conditions {
			if cond.Type == certificatesv1.CertificateApproved {
				return true
			}
		}
		return false
	})
	// The console's record of it waits for the ledger (and is retried),
	// never the approval.
	poll(t, "the console's record to fail on the ledger", 15*time.Second, func() bool { return feed.Failed() > 0 })
}
