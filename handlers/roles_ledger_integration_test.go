//go:build integration

package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// ledgerGranted are the roles by job granted get on clusterdesk.io/ledger
// (charts/clusterdesk/templates/roles.yaml): the auditor for the ledger,
// the APF admin for the what-if's recorded traffic, the admission admin for
// the replay's recorded writes.
var ledgerGranted = map[string]bool{"auditor": true, "apfAdmin": true, "admissionAdmin": true}

// refusedForGrant: the console's 403 page naming the missing grant, and
// nothing of the ledger's.
func refusedForGrant(t *testing.T, who, what string, code int, body, secret string) {
	t.Helper()
	if code != http.StatusForbidden {
		t.Errorf("%s on %s: %d, want 403", who, what, code)
		return
	}
	// page.LedgerGrantWords, as the error page escapes its quotes.
	for _, want := range []string{"needs a grant of its own", "verb &#34;get&#34; on resource &#34;ledger&#34; in API group &#34;clusterdesk.io&#34;"} {
		if !strings.Contains(body, want) {
			t.Errorf("%s's 403 on %s does not name the grant (%q missing): %.400s", who, what, want, body)
		}
	}
	if secret != "" && strings.Contains(body, secret) {
		t.Errorf("%s's 403 on %s shows %q", who, what, secret)
	}
}

// checkLedger is what one role's person reads of the ledger holding gone's
// story (a CSR the cluster no longer has, requested by alice, decided by
// bob), with the console's gate on: without the grant every ledger route
// (the page, both exports, the object's history and its export) is a 403
// naming it; with it, the history for who may list CSRs and the page and
// exports limited to the kinds the role lists.
func checkLedger(t *testing.T, b *oidcBrowser, user, job, gone string, listsCSRs bool) {
	t.Helper()
	who := user + " (" + job + ")"
	hist := urls.LedgerObject("csrs", gone, "")
	routes := []string{urls.Ledger, urls.LedgerCSV, urls.LedgerNDJSON, hist, hist + "?format=csv", hist + "?format=ndjson"}
	if !ledgerGranted[job] {
		for _, r := range routes {
			rec := b.get(r)
			refusedForGrant(t, who, r, rec.Code, rec.Body.String(), gone)
		}
		return
	}
	if listsCSRs {
		rec := b.get(hist)
		doc := docOf(t, rec.Body.String())
		if rec.Code != http.StatusOK || doc.Find(`[data-testid="ledger-step"]`).Length() != 4 {
			t.Errorf("%s reading the history of a gone CSR: %d, %d steps, want 200 and 4", who, rec.Code, doc.Find(`[data-testid="ledger-step"]`).Length())
		}
		for _, r := range []string{urls.LedgerCSV, hist + "?format=csv", hist + "?format=ndjson"} {
			if rec := b.get(r); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), gone) {
				t.Errorf("%s exporting %s: %d, want 200 naming %s: %.300s", who, r, rec.Code, gone, rec.Body.String())
			}
		}
		return
	}
	// Granted, but not a lister of CSRs: the kind's check refuses the
	// history; the page and the exports leave the CSRs out.
	if rec := b.get(hist); rec.Code != http.StatusForbidden {
		t.Errorf("%s reading the history of a CSR: %d, want 403", who, rec.Code)
	}
	rec := b.get(urls.Ledger)
	doc := docOf(t, rec.Body.String())
	if rec.Code != http.StatusOK || doc.Find(`[data-testid="ledger-row"]`).Length() != 0 ||
		!strings.Contains(doc.Find(`[data-testid="ledger-hidden"]`).Text(), "CertificateSigningRequests") {
		t.Errorf("%s on the ledger page: %d, %d rows, hidden %q; want CSRs hidden and no row",
			who, rec.Code, doc.Find(`[data-testid="ledger-row"]`).Length(), doc.Find(`[data-testid="ledger-hidden"]`).Text())
	}
	if rec := b.get(urls.LedgerCSV); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), gone) {
		t.Errorf("%s exporting the ledger: %d, want 200 without %s", who, rec.Code, gone)
	}
}

// checkLedgerTools: the replay of a policy (the recorded writes) and the
// APF what-if (the recorded traffic) behind the same gate. The viewer lists
// ValidatingAdmissionPolicies, FlowSchemas and priority levels, so only the
// gate refuses it; the admission admin replays (and reads the policy's
// agreement with the API server, a replay of the deployed version), the APF
// admin and the auditor open the what-if.
func checkLedgerTools(t *testing.T, browsers map[string]*oidcBrowser, policy string) {
	t.Helper()
	for _, c := range []struct {
		job, path string
		want      int
	}{
		{"viewer", urls.PolicyReplay(policy), http.StatusForbidden},
		{"admissionAdmin", urls.PolicyReplay(policy), http.StatusOK},
		{"auditor", urls.PolicyReplay(policy), http.StatusOK},
		{"viewer", urls.PolicyAgreement(policy), http.StatusForbidden},
		{"admissionAdmin", urls.PolicyAgreement(policy), http.StatusOK},
		{"viewer", urls.WhatIf, http.StatusForbidden},
		{"apfAdmin", urls.WhatIf, http.StatusOK},
		{"auditor", urls.WhatIf, http.StatusOK},
	} {
		rec := browsers[c.job].get(c.path)
		if c.want == http.StatusForbidden {
			refusedForGrant(t, "the "+c.job, c.path, rec.Code, rec.Body.String(), "")
		} else if rec.Code != c.want {
			t.Errorf("the %s on %s: %d, want %d: %.300s", c.job, c.path, rec.Code, c.want, rec.Body.String())
		}
	}
}
