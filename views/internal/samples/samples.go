// Package samples holds filled-in view models, hostile text included: the
// component tests render them (through viewtest) and the component gallery
// (/ui with --dev-ui) shows them, so what is seen there is what is tested.
// It imports no test package, because the gallery is part of the console.
package samples

import "github.com/clusterdesk/clusterdesk/views/model"

// XSS is placed into model strings; it must come out as text.
const XSS = `<script>alert(1)</script>`

// Chrome is a filled-in layout model; XSS sits in the user name and a banner.
func Chrome(readOnly bool) model.Chrome {
	return model.Chrome{
		Title:     "CertificateSigningRequests",
		User:      "kubernetes-admin " + XSS,
		ReadOnly:  readOnly,
		CSRFToken: "csrf-token-123",
		Version:   "v1.36.3",
		Nav: []model.NavItem{
			{Label: "CertificateSigningRequests", Href: "/csrs", Count: "3", Active: true},
			{Label: "CustomResourceDefinitions", Href: "/crds", Count: "42"},
			{Label: "ValidatingWebhookConfigurations", Href: "/webhooks"},
		},
		Breadcrumbs: []model.Crumb{{Label: "Overview", Href: "/"}, {Label: "CertificateSigningRequests"}},
		Banners: []model.Banner{
			{Tone: model.ToneError, Title: "Cluster unreachable", Message: "dial tcp: " + XSS, TestID: "banner-unreachable"},
			{Tone: model.ToneWarning, Title: "Data may be stale", TestID: "banner-stale"},
		},
	}
}

// ListPage is a sorted, filtered list of three CSR rows.
func ListPage() model.ListPage {
	return model.ListPage{
		Chrome: Chrome(false),
		KindID: "csrs",
		Title:  "CertificateSigningRequests",
		Action: "/csrs",
		Query:  "node",
		Sort:   "age",
		Desc:   true,
		Columns: []model.Column{
			{Key: "name", Label: "Name", Sortable: true, SortHref: "/csrs?q=node&sort=name&dir=asc"},
			{Key: "age", Label: "Age", Sortable: true, SortHref: "/csrs?q=node&sort=age&dir=asc", Sorted: "desc"},
			{Key: "signer", Label: "Signer"},
			{Key: "condition", Label: "Condition", Sortable: true, SortHref: "/csrs?q=node&sort=condition&dir=asc"},
		},
		Rows: []model.Row{
			row("csr-a", "2m", model.Badge{Text: "Pending", Tone: model.TonePending}),
			row("csr-b", "1h", model.Badge{Text: "Issued", Tone: model.ToneOK, Hint: "certificate issued"}),
			row(XSS, "3d", model.Badge{Text: "Denied", Tone: model.ToneError}),
		},
		Total: 12,
		Shown: 3,
		Empty: "No CSR matches.",
	}
}

func row(name, age string, b model.Badge) model.Row {
	return model.Row{
		ID:   "row-csrs-" + name,
		Name: name,
		Href: "/csrs/" + name,
		Cells: []model.Cell{
			{Text: name, Mono: true},
			{Text: age, Title: "2026-11-21T10:00:00Z"},
			{Text: "kubernetes.io/kube-apiserver-client", Mono: true},
			{Badges: []model.Badge{b}},
		},
	}
}

// DetailPage is a pending CSR with everything filled in.
func DetailPage() model.DetailPage {
	return model.DetailPage{
		Chrome:    Chrome(false),
		KindID:    "csrs",
		KindTitle: "CertificateSigningRequest",
		Name:      "csr-a",
		Status:    model.Badge{Text: "Pending", Tone: model.TonePending, Hint: "not approved yet"},
		Fields: []model.Field{
			{Label: "Signer name", Value: "kubernetes.io/kube-apiserver-client", Mono: true},
			{Label: "Requestor", Value: XSS},
			{Label: "Usages", Badges: []model.Badge{{Text: "client auth"}}},
			{Label: "Expiration", Value: "24h", Hint: "spec.expirationSeconds"},
		},
		Sections: []model.Section{
			{Title: "Decoded request", TestID: "section-decoded", Fields: []model.Field{{Label: "Subject", Value: "CN=alice"}}},
			{Title: "Checks", TestID: "section-checks", Columns: []string{"Check", "Result"}, Rows: [][]string{{"CN matches", "pass"}, {"Org", XSS}}},
		},
		Problems: []model.Banner{{Tone: model.ToneError, Title: "Invalid request", Message: "not PEM", TestID: "banner-invalid-pem"}},
		Conditions: []model.Condition{
			{Type: "Approved", Status: "True", Tone: model.ToneOK, Reason: "KubectlApprove", Message: XSS, Age: "1m", Time: "2026-11-21T10:00:00Z"},
		},
		YAML: "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: \"" + XSS + "\"\n",
		Actions: []model.Action{
			{Label: "Approve", URL: "/csrs/csr-a/approve", Tone: model.ToneOK, TestID: "approve", WithReason: true},
			{Label: "Deny", URL: "/csrs/csr-a/deny", Tone: model.ToneError, TestID: "deny", Confirm: "Deny csr-a?"},
		},
		MayUpdate: true,
		MayDelete: true,
	}
}
