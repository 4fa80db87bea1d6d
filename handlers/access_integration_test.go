//go:build integration

package handlers

import (
	"context"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestRoutesOfAForbiddenKindAnswer403 signs in as the approver, whom RBAC
// lets read CSRs and nothing else the console shows, and asks for the pages
// of real objects of other kinds: the list answers 403 with its banner, every
// page of one object 403, while the approver's own kind still serves.
func TestRoutesOfAForbiddenKindAnswer403(t *testing.T) {
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	drivers, err := admin.StorageV1().CSIDrivers().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(drivers.Items) == 0 {
		t.Fatalf("the devcluster has no CSIDriver to ask for: %v", err)
	}
	schemas, err := admin.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(schemas.Items) == 0 {
		t.Fatalf("the devcluster has no FlowSchema to ask for: %v", err)
	}
	csrs, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(csrs.Items) == 0 {
		t.Fatalf("the devcluster has no CSR to ask for: %v", err)
	}

	ls := newLiveServer(t, testcluster.Approver, false)
	sess := ls.login(t)
	for _, obj := range []struct {
		kind kube.KindID
		name string
	}{{kube.CSIDrivers, drivers.Items[0].Name}, {kube.FlowSchemas, schemas.Items[0].Name}} {
		t.Run(string(obj.kind), func(t *testing.T) {
			code, doc, _ := ls.get(t, sess, urls.List(obj.kind))
			if code != http.StatusForbidden || doc.Find(`[data-testid="banner-forbidden"]`).Length() != 1 || doc.Find(`[data-testid="list-row"]`).Length() != 0 {
				t.Errorf("list: status %d, banner %d, rows %d", code, doc.Find(`[data-testid="banner-forbidden"]`).Length(), doc.Find(`[data-testid="list-row"]`).Length())
			}
			for _, path := range []string{
				urls.Object(obj.kind, obj.name), urls.YAML(obj.kind, obj.name), urls.History(obj.kind, obj.name),
				urls.Edit(obj.kind, obj.name), urls.Delete(obj.kind, obj.name), urls.New(obj.kind),
			} {
				code, doc, _ := ls.get(t, sess, path)
				if code != http.StatusForbidden || doc.Find(`[data-testid="yaml"]`).Length() != 0 || doc.Find(`[data-testid="editor"]`).Length() != 0 {
					t.Errorf("%s: status %d, want 403 and nothing of the object", path, code)
				}
			}
		})
	}
	if code, _, _ := ls.get(t, sess, urls.FlowSchemaForm(schemas.Items[0].Name)); code != http.StatusForbidden {
		t.Errorf("FlowSchema form: status %d, want 403", code)
	}
	// The approver's own kind: the same routes serve. The object's history is
	// the ledger's one history (issue 44 item 3): its old URL leads there.
	name := csrs.Items[0].Name
	for _, path := range []string{urls.CSRs, urls.CSR(name), urls.LedgerObject(kube.CSRs, name, "")} {
		if code, _, _ := ls.get(t, sess, path); code != http.StatusOK {
			t.Errorf("%s: status %d, want 200 for a kind the approver may list", path, code)
		}
	}
	old := ls.do(newGet(urls.History(kube.CSRs, name), sess))
	if old.Code != http.StatusFound || old.Header().Get("Location") != urls.LedgerObject(kube.CSRs, name, "") {
		t.Errorf("%s: status %d to %q, want 302 to the object's one history", urls.History(kube.CSRs, name), old.Code, old.Header().Get("Location"))
	}
}
