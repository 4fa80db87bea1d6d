//go:build integration

package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestWhoApprovesListsPolicyWriters: writing a CSRApprovalPolicy is
// approving, through the approver, so "who approves" lists the subjects that
// may write one, each said to be held back by the guard or not: a service
// account that may create policies but not approve is listed as one only the
// guard stops; system:masters (cluster-admin) as one no guard stops.
func TestWhoApprovesListsPolicyWriters(t *testing.T) {
	writer := testcluster.TempServiceAccount(t, "it-policy-writer", []rbacv1.PolicyRule{
		{APIGroups: []string{"clusterdesk.io"}, Resources: []string{"csrapprovalpolicies"}, Verbs: []string{"get", "create"}},
	})
	ls := newLiveServer(t, testcluster.Admin, false)
	code, doc, _ := ls.get(t, ls.login(t), urls.CSRApprovers(certificatesv1.KubeAPIServerClientSignerName))
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	rows := map[string]*goquery.Selection{}
	doc.Find(`[data-testid="policy-writer"]`).Each(func(_ int, s *goquery.Selection) {
		rows[s.Find(".font-mono").Text()] = s
	})
	w, ok := rows[writer.User]
	if !ok {
		t.Fatalf("%s, who may create policies, is not among the policy writers %v", writer.User, keys(rows))
	}
	if g, _ := w.Attr("data-guarded"); g != "false" || !strings.Contains(w.Text(), "only the guard") || !strings.Contains(w.Text(), "create") {
		t.Errorf("%s: guarded=%s, %q", writer.User, g, strings.Join(strings.Fields(w.Text()), " "))
	}
	if m, ok := rows["system:masters"]; !ok || !strings.Contains(m.Text(), "bypasses authorization") {
		t.Errorf("system:masters is not listed as a writer no guard stops: %v", keys(rows))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
