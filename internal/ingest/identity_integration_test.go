//go:build integration

package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// The attacks of issue 43 on the ledger, each against the devcluster's real
// API server sending its audit events to a receiver under test, and real
// PostgreSQL where the attack is PostgreSQL's.

// pgLedger is a ledger in a throwaway PostgreSQL.
func pgLedger(t *testing.T) ledger.Store {
	t.Helper()
	store, _, _ := testfixtures.PostgresLedger(t)
	return store
}

// headerTransport sets one request header on every request.
type headerTransport struct {
	rt          http.RoundTripper
	name, value string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.rt.RoundTrip(r)
}

// clientWithAuditID is identity's client sending auditID as every request's
// Audit-ID header, as any client may.
func clientWithAuditID(t *testing.T, identity, auditID string) kubernetes.Interface {
	t.Helper()
	cfg := testcluster.RestConfig(t, identity)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return headerTransport{rt, "Audit-ID", auditID} })
	return kubernetes.NewForConfigOrDie(cfg)
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// A client sends its write with the audit ID of an earlier event (one the
// API server refused): the ledger keeps both, each with that audit ID, as
// the API server's own audit log does. Before issue 43 the ledger took the
// audit ID for the entry's identity and counted the write a duplicate.
func TestWebhookKeepsAWriteThatReusesAnEarlierAuditID(t *testing.T) {
	store := sqliteLedger(t)
	webhookUnderTest(t, store, Options{}, true)
	ctx := context.Background()
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "reused"})
	forged := "reused-" + strconv.FormatInt(time.Now().UnixNano(), 10)

	err := clientWithAuditID(t, testcluster.Auditor, forged).CertificatesV1().CertificateSigningRequests().Delete(ctx, name, metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("the auditor's delete: %v, want forbidden", err)
	}
	if err := clientWithAuditID(t, testcluster.Admin, forged).CertificatesV1().CertificateSigningRequests().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the admin's delete: %v", err)
	}
	refused := waitEntry(t, store, "the auditor's refused delete", func(e ledger.Entry) bool {
		return e.AuditID == forged && e.User == testcluster.Auditor
	})
	deleted := waitEntry(t, store, "the admin's delete under the same audit ID", func(e ledger.Entry) bool {
		return e.AuditID == forged && e.User == testcluster.Admin
	})
	if refused.Result != ledger.ResultDenied || deleted.Result != ledger.ResultOK || deleted.Action != ledger.ActionDelete || deleted.Name != name || refused.ID == deleted.ID {
		t.Errorf("refused %+v\ndeleted %+v", refused, deleted)
	}
}

// Refused requests whose names PostgreSQL cannot hold as sent (a NUL byte;
// a name past a btree index row's bound) reach a PostgreSQL ledger in the
// same batches as other people's writes: every one of them is stored, the
// refused ones with their names made storable. Before issue 43 PostgreSQL
// refused the whole batch, the webhook answered 503 and the API server
// dropped the batch after its retries.
func TestWebhookOnPostgreSQLStoresTheBatchOfARequestWithAnUnstorableName(t *testing.T) {
	store := pgLedger(t)
	rc, _ := webhookUnderTest(t, store, Options{}, true)
	ctx := context.Background()
	suffix := strconv.FormatInt(time.Now().UnixNano(), 10)
	nulName, longName := "poison-\x00-"+suffix, "poison-"+randomHex(t, 8000)
	auditor := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Auditor)).CertificatesV1().CertificateSigningRequests()
	anonymous := kubernetes.NewForConfigOrDie(rest.AnonymousClientConfig(testcluster.RestConfig(t, testcluster.Admin))).CertificatesV1().CertificateSigningRequests()
	// The refused requests and a legitimate write within the API server's
	// batch window (--audit-webhook-batch-max-wait=1s).
	refuse := func(who string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
			t.Fatalf("%s: %v, want a refusal", who, err)
		}
	}
	refuse("the auditor's delete of a name with a NUL", auditor.Delete(ctx, nulName, metav1.DeleteOptions{}))
	refuse("an anonymous delete of a name with a NUL", anonymous.Delete(ctx, nulName, metav1.DeleteOptions{}))
	legit := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "beside-poison"})
	refuse("the auditor's delete of a long name", auditor.Delete(ctx, longName, metav1.DeleteOptions{}))

	waitEntry(t, store, "the legitimate create", func(e ledger.Entry) bool {
		return e.Name == legit && e.Action == ledger.ActionCreate && e.Result == ledger.ResultOK
	})
	nul := waitEntry(t, store, "the refused delete of the name with a NUL", func(e ledger.Entry) bool {
		return e.User == testcluster.Auditor && strings.HasSuffix(e.Name, suffix)
	})
	if want := "poison-␀-" + suffix; nul.Name != want || nul.Result != ledger.ResultDenied || strings.ContainsRune(nul.Reason, 0) {
		t.Errorf("the NUL's entry: name %q reason %q result %q; want name %q", nul.Name, nul.Reason, nul.Result, want)
	}
	long := waitEntry(t, store, "the refused delete of the long name", func(e ledger.Entry) bool {
		return e.User == testcluster.Auditor && e.Name == longName
	})
	if page, err := store.Query(ctx, ledger.Query{Kind: "csrs", Name: longName}); err != nil || len(page.Entries) != 1 || page.Entries[0].ID != long.ID {
		t.Errorf("the long name's history: %v, %v; want its entry", page.Entries, err)
	}
	if c := rc.Counts(); c.Refused[RefusedUnavailable] != 0 {
		t.Errorf("the webhook answered 503 %d times", c.Refused[RefusedUnavailable])
	}
}

// A refused write of a client that did not authenticate is counted, not
// stored: anybody who reaches the API server can send them without end.
func TestWebhookCountsAnonymousRefusalsWithoutStoringThem(t *testing.T) {
	store := sqliteLedger(t)
	rc, _ := webhookUnderTest(t, store, Options{}, true)
	ctx := context.Background()
	name := "anonymous-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	anonymous := kubernetes.NewForConfigOrDie(rest.AnonymousClientConfig(testcluster.RestConfig(t, testcluster.Admin)))
	err := anonymous.CertificatesV1().CertificateSigningRequests().Delete(ctx, name, metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
		t.Fatalf("an anonymous delete: %v, want a refusal", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for rc.Counts().AnonymousRefused == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no anonymous refusal counted after 60 s: %+v", rc.Counts())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := store.Export(ctx, ledger.Query{}, func(e ledger.Entry) error {
		if e.Name == name {
			t.Errorf("the anonymous refusal is stored: %+v", e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// One of the console's records with a NUL (a reason typed by whoever tried
// a decision) no longer stops the console's records into a PostgreSQL
// ledger: it is stored, made storable, and so are the records after it.
// Before issue 43 its batch failed and was retried forever, every later
// record queued behind it until a restart.
func TestConsoleFeedOnPostgreSQLStoresTheRecordsAfterOneWithANUL(t *testing.T) {
	store := pgLedger(t)
	f := NewConsoleFeed(store, 0, nil)
	now := time.Now()
	f.Record(audit.Record{ID: "poison", Time: now, User: "mallory", Verb: "deny", Kind: "CertificateSigningRequest",
		APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Name: "csr-1",
		Result: audit.ResultDenied, Reason: "Nope\x00", Error: "forbidden"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	f.Record(audit.Record{ID: "later", Time: now.Add(time.Second), User: "alice", Verb: "approve", Kind: "CertificateSigningRequest",
		APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Name: "csr-2", Result: audit.ResultOK, Reason: "ok"})
	later := waitEntry(t, store, "the record after the NUL", func(e ledger.Entry) bool { return e.ID == "later" })
	poison := waitEntry(t, store, "the record with the NUL", func(e ledger.Entry) bool { return e.ID == "poison" })
	if later.User != "alice" || !strings.HasPrefix(poison.Reason, "Nope␀") || f.Discarded() != 0 {
		t.Errorf("later %+v\npoison %+v\ndiscarded %d", later, poison, f.Discarded())
	}
}
