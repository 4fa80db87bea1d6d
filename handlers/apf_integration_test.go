//go:build integration

package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

func TestFlowSchemaOverviewOnTheDevcluster(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	code, doc, took := ls.get(t, sess, "/flowschemas")
	rows := doc.Find(`[data-testid="list-row"]`)
	if code != http.StatusOK || rows.Length() < 11 {
		t.Fatalf("status %d with %d rows", code, rows.Length())
	}
	t.Logf("/flowschemas: %d rows in %v", rows.Length(), took)
	prev := 0
	rows.Each(func(i int, s *goquery.Selection) {
		pos, _ := strconv.Atoi(s.AttrOr("data-position", ""))
		if pos <= prev {
			t.Errorf("row %d (%s) at position %d after %d", i, s.AttrOr("data-name", ""), pos, prev)
		}
		prev = pos
	})
	if first := rows.First().AttrOr("data-name", ""); first != "exempt" {
		t.Errorf("first row %q, want exempt", first)
	}
	if last := rows.Last().AttrOr("data-name", ""); last != "catch-all" {
		t.Errorf("last row %q, want catch-all", last)
	}
	// The demo seed's clusterdesk-ghost-users points at a missing priority level.
	ghost := doc.Find(`[data-name="clusterdesk-ghost-users"]`)
	if ghost.Length() != 1 || !strings.Contains(ghost.Text(), "Missing") || ghost.Find(`[data-testid="fs-prioritylevel"] a`).Length() != 0 {
		t.Errorf("dangling demo FlowSchema: %q", strings.Join(strings.Fields(ghost.Text()), " "))
	}
	if href, _ := doc.Find(`[data-name="global-default"] [data-testid="fs-prioritylevel"] a`).Attr("href"); href != "/prioritylevels/global-default" {
		t.Errorf("priority level link %q", href)
	}
	if doc.Find(`[data-testid="classify-link"]`).AttrOr("href", "") != "/flowschemas/-/classify" {
		t.Error("no link to the classifier")
	}

	r := httptest.NewRequest(http.MethodGet, "/flowschemas?q=leader", nil)
	r.Header.Set("HX-Request", "true")
	r.AddCookie(sess)
	rec := ls.do(r)
	if body := rec.Body.String(); strings.Contains(body, "<html") || !strings.Contains(body, `id="list-table"`) || !strings.Contains(body, "system-leader-election") {
		t.Errorf("htmx filter: status %d, fragment %.200q", rec.Code, body)
	}
}

func TestClassifierPageOnTheDevcluster(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	cases := []struct {
		query  url.Values
		fs, pl string
	}{
		{url.Values{"user": {"system:kube-controller-manager"}, "verb": {"update"}, "apigroup": {"coordination.k8s.io"}, "resource": {"leases"}, "namespace": {"kube-system"}},
			"system-leader-election", "leader-election"},
		{url.Values{"serviceaccount": {"default/app"}, "verb": {"list"}, "resource": {"pods"}, "namespace": {"default"}}, "service-accounts", "workload-low"},
		{url.Values{"user": {"auditor"}, "verb": {"list"}, "resource": {"pods"}}, "clusterdesk-auditor-reads", "clusterdesk-console"},
		{url.Values{"user": {"ghost"}, "verb": {"list"}, "resource": {"pods"}, "namespace": {"x"}}, "global-default", "global-default"},
		{url.Values{"user": {"bob"}, "kind": {"nonresource"}, "verb": {"get"}, "path": {"/readyz"}}, "probes", "exempt"},
	}
	for _, c := range cases {
		code, doc, _ := ls.get(t, sess, "/flowschemas/-/classify?"+c.query.Encode())
		fs := strings.TrimSpace(doc.Find(`[data-testid="result-flowschema-name"]`).Text())
		pl := strings.TrimSpace(doc.Find(`[data-testid="result-prioritylevel-name"]`).Text())
		if code != http.StatusOK || fs != c.fs || pl != c.pl {
			t.Errorf("%v: status %d, %s → %s; want %s → %s", c.query, code, fs, pl, c.fs, c.pl)
		}
		steps := doc.Find(`[data-testid="trace-step"]`)
		if steps.Last().AttrOr("data-flowschema", "") != c.fs {
			t.Errorf("%v: the trace does not end at the match", c.query)
		}
	}
	// The dangling demo FlowSchema is in the ghost's path, skipped.
	_, doc, _ := ls.get(t, sess, "/flowschemas/-/classify?user=ghost&verb=list&resource=pods&namespace=x")
	if step := doc.Find(`[data-flowschema="clusterdesk-ghost-users"]`); !strings.Contains(step.Text(), "Skipped") {
		t.Errorf("ghost step %q", strings.Join(strings.Fields(step.Text()), " "))
	}

	code, doc, _ := ls.get(t, sess, "/flowschemas/-/classify?user=&verb=get&kind=nonresource&path=healthz")
	if code != http.StatusUnprocessableEntity || doc.Find(`[data-testid="classify-error-user"]`).Length() != 1 ||
		doc.Find(`[data-testid="classify-error-path"]`).Length() != 1 || doc.Find(`[data-testid="classify-result"]`).Length() != 0 {
		t.Errorf("bad input: status %d", code)
	}
	code, doc, _ = ls.get(t, sess, "/flowschemas/-/classify")
	if code != http.StatusOK || doc.Find(`[data-testid="classify-empty"]`).Length() != 1 {
		t.Errorf("blank form: status %d", code)
	}
}

func TestClassifierForbiddenWithoutFlowSchemaAccess(t *testing.T) {
	// The approver may read CSRs only.
	ls := newLiveServer(t, testcluster.Approver, false)
	sess := ls.login(t)
	code, doc, _ := ls.get(t, sess, "/flowschemas/-/classify?user=bob&verb=get&resource=pods")
	if code != http.StatusForbidden || doc.Find(`[data-testid="banner-forbidden"]`).Length() != 1 || doc.Find(`[data-testid="classify-result"]`).Length() != 0 {
		t.Errorf("status %d", code)
	}
	code, doc, _ = ls.get(t, sess, "/flowschemas")
	if code != http.StatusForbidden || doc.Find(`[data-testid="list-row"]`).Length() != 0 {
		t.Errorf("list: status %d", code)
	}
}
