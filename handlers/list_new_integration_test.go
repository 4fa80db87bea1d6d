//go:build integration

package handlers

import (
	"net/http"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestListPagesOfferNew: every list page has a "New" button to its create
// page for a user who may create the kind; none for the auditor (RBAC says
// no create) and none in read-only mode.
func TestListPagesOfferNew(t *testing.T) {
	admin := newLiveServer(t, testcluster.Admin, false)
	adminSess := admin.login(t)
	auditor := newLiveServer(t, testcluster.Auditor, false)
	auditorSess := auditor.login(t)
	readOnly := newLiveServer(t, testcluster.Admin, true)
	readOnlySess := readOnly.login(t)
	for _, list := range listPaths {
		code, doc, _ := admin.get(t, adminSess, list)
		href, _ := doc.Find(`[data-testid="new-link"]`).Attr("href")
		if code != http.StatusOK || href != list+"/new" {
			t.Errorf("admin %s: status %d, New links to %q", list, code, href)
		}
		if code, _, _ := admin.get(t, adminSess, href); code != http.StatusOK {
			t.Errorf("admin %s: status %d", href, code)
		}
		if _, doc, _ := auditor.get(t, auditorSess, list); doc.Find(`[data-testid="new-link"]`).Length() != 0 {
			t.Errorf("auditor %s: a New button, though the auditor may not create", list)
		}
		if _, doc, _ := readOnly.get(t, readOnlySess, list); doc.Find(`[data-testid="new-link"]`).Length() != 0 {
			t.Errorf("read-only %s: a New button", list)
		}
	}
}
