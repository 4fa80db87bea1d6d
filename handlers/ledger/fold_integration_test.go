//go:build integration

package ledger

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/ingest/ingesttest"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// serveAuditWebhook serves the devcluster API server's audit webhook into
// store, as the console does, until the test ends.
func serveAuditWebhook(t *testing.T, store ledger.Store) {
	t.Helper()
	ingesttest.ServeAuditWebhook(t, ingest.Options{Store: store})
}

// rowsOf are the list's rows of the object name as "user action".
func rowsOf(doc *goquery.Document, kind, name string) []string {
	var out []string
	doc.Find(tid("ledger-row")).Each(func(_ int, r *goquery.Selection) {
		if href, _ := r.Find(tid("ledger-history-link")).Attr("href"); href == urls.LedgerObject(kind, name, "") {
			out = append(out, strings.TrimSpace(r.Find(tid("ledger-user-link")).First().Text())+" "+r.AttrOr("data-action", ""))
		}
	})
	return out
}

// A person creates a FlowSchema; the API server's flow control controller
// then writes its status as system:apiserver, the housekeeping that made the
// ledger's first page a wall (issue 44). The first page shows the person's
// create and says the housekeeping is hidden; one click shows it.
func TestFirstPageAfterRealControlPlaneActivity(t *testing.T) {
	store := openSQLite(t)
	serveAuditWebhook(t, store)
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := fmt.Sprintf("fold-%d", time.Now().UnixNano())
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 9000,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"}}}
	ctx := context.Background()
	if _, err := admin.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.FlowcontrolV1().FlowSchemas().Delete(context.Background(), name, metav1.DeleteOptions{}) })

	// Wait until the ledger holds the API server's status write and the
	// person's create: with two API servers each sends its own batches, so
	// either may arrive first.
	deadline := time.Now().Add(60 * time.Second)
	for {
		pg, err := store.Query(ctx, ledger.Query{Kind: "flowschemas", Name: name})
		if err != nil {
			t.Fatal(err)
		}
		status, create := false, false
		for _, e := range pg.Entries {
			status = status || (e.User == "system:apiserver" && e.Action == ledger.ActionStatus && ledger.IsHousekeeping(e))
			create = create || (e.User == "admin" && e.Action == ledger.ActionCreate)
		}
		if status && create {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, of %s: status write by system:apiserver %v, admin's create %v (%d entries)", name, status, create, len(pg.Entries))
		}
		time.Sleep(200 * time.Millisecond)
	}

	e := newServer(t, store, nil)
	rec, doc := get(t, e, urls.Ledger)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if got := strings.Join(rowsOf(doc, "flowschemas", name), ", "); got != "admin create" {
		t.Errorf("first page's rows of %s: %q, want the person's create alone", name, got)
	}
	if n := doc.Find(`[data-testid="ledger-row"][data-action="status"]`).Length(); n != 0 {
		t.Errorf("the first page lists %d status writes", n)
	}
	fold := doc.Find(tid("ledger-fold"))
	if !strings.Contains(fold.Text(), "Housekeeping by the control plane is hidden") {
		t.Fatalf("no fold line: %q", fold.Text())
	}
	show, _ := fold.Find(tid("ledger-fold-toggle")).Attr("href")
	rec, doc = get(t, e, show)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d", show, rec.Code)
	}
	if got := strings.Join(rowsOf(doc, "flowschemas", name), ", "); !strings.Contains(got, "system:apiserver status") ||
		!strings.Contains(got, "admin create") {
		t.Errorf("%s: rows of %s %q, want the API server's status write and the create", show, name, got)
	}
}
