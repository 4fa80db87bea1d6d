//go:build integration

package ledger

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// watchInto feeds the versions a cache on the devcluster observes into
// store, as the console does (ingest.WatchFeed, the decided requests
// summarized), until the test ends.
func watchInto(t *testing.T, store ledger.Store) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cache, err := kube.NewCache(testcluster.RestConfig(t, testcluster.Admin), log)
	if err != nil {
		t.Fatal(err)
	}
	cache.SummarizeDecidedRequests(csr.Summarize) // as the console does
	feed := ingest.NewWatchFeed(store, 0, log)
	cache.OnObject(feed.Enqueue)
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	running.Go(func() { feed.Run(ctx) })
	running.Go(func() { cache.Run(ctx) })
	t.Cleanup(func() { cancel(); running.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for !cache.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("the cache did not sync in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A CSR created and approved by a plain client (as kubectl does it), and
// issued by the controller manager, reaches the ledger twice over: through
// the API server's audit webhook and through the console's watch. Its one
// history tells each version once, by the API server's entry (who), with the
// watch's diff (what).
func TestHistoryTellsEachVersionOnceOnTheDevcluster(t *testing.T) {
	store := openSQLite(t)
	serveAuditWebhook(t, store)
	watchInto(t, store)
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "once"})
	ctx := context.Background()
	csr, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ItOnce", Message: "approved by a plain client"})
	if _, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Wait until both sources told every version, the certificate's too:
	// the webhook's batches and the watch's come in either order.
	var all []ledger.Entry
	deadline := time.Now().Add(60 * time.Second)
	for {
		pg, err := store.Query(ctx, ledger.Query{Kind: "csrs", Name: name, Oldest: true, Limit: ledger.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		all = pg.Entries
		audited, watched := map[string]bool{}, map[string]bool{}
		issued := false
		for _, e := range all {
			switch e.Source {
			case ledger.SourceAPIServer:
				if e.Result == ledger.ResultOK && e.RV != "" {
					audited[e.RV] = true
				}
				issued = issued || e.Action == ledger.ActionIssue
			case ledger.SourceWatch:
				watched[e.RV] = true
			}
		}
		covered := len(watched) >= 3 // created, approved, issued
		for rv := range watched {
			covered = covered && audited[rv]
		}
		if issued && covered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: issued %v, versions audited %v, watched %v", issued, audited, watched)
		}
		time.Sleep(200 * time.Millisecond)
	}

	e := newServer(t, store, nil)
	rec, doc := get(t, e, urls.LedgerObject("csrs", name, ""))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	var steps []string
	doc.Find(tid("ledger-step")).Each(func(_ int, s *goquery.Selection) {
		steps = append(steps, s.AttrOr("data-action", "")+" "+strings.TrimSpace(s.Find("p").First().Find("span.text-xs").First().Text()))
	})
	var versions int
	seen := map[string]bool{}
	for _, e := range all {
		if e.Source == ledger.SourceWatch && !seen[e.RV] {
			seen[e.RV] = true
			versions++
		}
	}
	want := []string{"create API server", "approve API server", "issue API server"}
	if fmt.Sprint(steps) != fmt.Sprint(want) || versions != 3 {
		t.Fatalf("the history tells %q of %d versions, want %q, each once", steps, versions, want)
	}
	approve := doc.Find(tid("ledger-step") + `[data-action="approve"]`)
	if added := approve.Find(`[data-testid="diff-line"][data-kind="added"]`).Text(); !strings.Contains(added, "ItOnce") {
		t.Errorf("the approval shows no diff of its version (the watch's): %q", added)
	}
	if !strings.Contains(approve.Find(tid("ledger-step-user")).Text(), "admin") {
		t.Errorf("the approval is not credited to admin: %q", approve.Text())
	}
}
