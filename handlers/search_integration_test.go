//go:build integration

package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestSearchOnTheDevcluster: the admin finds a seeded FlowSchema by part of
// its name. With the cache read as admin but access checked for the approver
// (who may list CSRs only), the same search shows no FlowSchema: the search
// applies the list pages' access check before reading the shared cache.
func TestSearchOnTheDevcluster(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)

	schemas, err := ls.cache.FlowSchemas()
	if err != nil || len(schemas) == 0 {
		t.Fatalf("no FlowSchemas in the cache (err %v)", err)
	}
	name := schemas[0].Name
	part := name[:max(3, len(name)/2)]

	code, doc, _ := ls.get(t, sess, "/search?q="+strings.ToUpper(part))
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	found := false
	doc.Find(`[data-testid="search-group-flowschemas"] [data-testid="search-hit"]`).Each(func(_ int, s *goquery.Selection) {
		found = found || s.AttrOr("href", "") == "/flowschemas/"+name
	})
	if !found {
		t.Errorf("searching %q did not find FlowSchema %s", part, name)
	}

	approver, err := kube.NewAccess(testcluster.RestConfig(t, testcluster.Approver))
	if err != nil {
		t.Fatal(err)
	}
	as := newConsole(t, Deps{Cluster: ls.cache, Access: approver, User: testcluster.Approver})
	code, doc, _ = as.get(t, as.login(t), "/search?q="+part)
	if code != http.StatusOK {
		t.Fatalf("approver: status %d", code)
	}
	if n := doc.Find(`[data-testid="search-group-flowschemas"]`).Length(); n != 0 {
		t.Error("the approver may not list FlowSchemas, yet the search showed them")
	}
	if !strings.Contains(doc.Find(`[data-testid="search-notes"]`).Text(), "FlowSchemas") {
		t.Error("the search should say FlowSchemas were not searched")
	}
}
