package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// longName is the longest name Kubernetes allows (a DNS subdomain, 253
// characters), dotted like a real one.
var longName = strings.Repeat("a.", 126) + "b"

// oddName is a custom resource name that needs escaping: custom resources
// only have to be valid path segments (no "/", no "%").
const oddName = "a b;c,d?e#f:g@h+i=j&k$l"

// builtURL is one address urls builds and the route it must reach.
type builtURL struct {
	builder string // the urls function or constant that made it
	method  string
	url     string
	route   string            // the route pattern it must be served by
	params  map[string]string // the route parameters the handler must see
}

func builtURLs() []builtURL {
	const kind, crd, group = "csidrivers", "gadgets.example.com", "s-0123456789ab"
	obj := map[string]string{"kind": kind, "name": longName}
	csr := map[string]string{"kind": "csrs", "name": longName}
	csrName := map[string]string{"name": longName}
	crdName := map[string]string{"name": crd}
	cr := map[string]string{"name": crd, "ns": "default", "obj": oddName}
	clusterCR := map[string]string{"name": crd, "ns": urls.ClusterScoped, "obj": oddName}
	fsForm := map[string]string{"name": longName}
	ed, crEd := urls.EditorOf(urls.Object(kind, longName)), urls.EditorOf(urls.CRInstance(crd, "default", oddName))
	get, post := http.MethodGet, http.MethodPost
	return []builtURL{
		{"Home", get, urls.Home, urls.Home, nil},
		{"Healthz", get, urls.Healthz, urls.Healthz, nil},
		{"Readyz", get, urls.Readyz, urls.Readyz, nil},
		{"Login", get, urls.Login, urls.Login, nil},
		{"Login", post, urls.Login, urls.Login, nil},
		{"Logout", post, urls.Logout, urls.Logout, nil},
		{"OIDCLogin", get, urls.OIDCLogin, urls.OIDCLogin, nil},
		{"OIDCCallback", get, urls.OIDCCallback + "?code=c&state=s", urls.OIDCCallback, nil},
		{"Gallery", get, urls.Gallery, urls.Gallery, nil},
		{"Search", get, urls.Search + "?q=x", urls.Search, nil},
		{"Events", get, urls.Events, urls.Events, nil},
		{"Activity", get, urls.Activity, urls.Activity, nil},
		{"ActivityCSV", get, urls.ActivityCSV, urls.ActivityCSV, nil},
		{"ActivityJSON", get, urls.ActivityJSON, urls.ActivityJSON, nil},

		{"List", get, urls.List(kube.KindID(kind)), urls.ListRoute, map[string]string{"kind": kind}},
		{"ListWithLint", get, urls.ListWithLint(kube.KindID(kind), urls.LintDrift), urls.ListRoute, map[string]string{"kind": kind}},
		{"Object", get, urls.Object(kind, longName), urls.ObjectRoute, obj},
		{"History", get, urls.History(kind, longName), urls.HistoryRoute, obj},
		{"YAML", get, urls.YAML(kind, longName), urls.YAMLRoute, obj},
		{"New", get, urls.New(kind), urls.NewRoute, map[string]string{"kind": kind}},
		{"Create", post, urls.Create(kind), urls.CreateRoute, map[string]string{"kind": kind}},
		{"Edit", get, urls.Edit(kind, longName), urls.EditRoute, obj},
		{"Delete", get, urls.Delete(kind, longName), urls.DeleteRoute, obj},
		{"EditorOf", get, ed.Edit, urls.EditRoute, obj},
		{"EditorOf", post, ed.Preview, urls.PreviewRoute, obj},
		{"EditorOf", post, ed.Apply, urls.ApplyRoute, obj},
		{"EditorOf", post, ed.Rebase, urls.RebaseRoute, obj},
		{"EditorOf", get, ed.Delete, urls.DeleteRoute, obj},
		{"EditorOf", post, ed.Delete, urls.DeleteRoute, obj},
		{"Cleanup", get, urls.Cleanup(kind), urls.CleanupRoute, map[string]string{"kind": kind}},
		{"Cleanup", post, urls.Cleanup(kind), urls.CleanupRoute, map[string]string{"kind": kind}},
		{"CleanupConfirm", post, urls.CleanupConfirm(kind), urls.CleanupConfirmRoute, map[string]string{"kind": kind}},

		{"CSRs", get, urls.CSRs, urls.CSRs, nil},
		{"CSR", get, urls.CSR(longName), urls.ObjectRoute, csr},
		{"CSRCertificate", get, urls.CSRCertificate(longName), urls.CSRCertificateRoute, csrName},
		{"CSRNodeCheck", get, urls.CSRNodeCheck(longName), urls.CSRNodeCheckRoute, csrName},
		{"CSRSANs", get, urls.CSRSANs(longName, "00000000-0000-4000-8000-000000000001"), urls.CSRSANsRoute, csrName},
		{"CSRPolicy", get, urls.CSRPolicy(longName), urls.CSRPolicyRoute, map[string]string{"policy": longName}},
		{"CSRPolicyApprove", get, urls.CSRPolicyApprove(longName), urls.CSRPolicyApproveRoute, map[string]string{"policy": longName}},
		{"CSRPolicyApprove", post, urls.CSRPolicyApprove(longName), urls.CSRPolicyApproveRoute, map[string]string{"policy": longName}},
		{"CSRPolicies", get, urls.CSRPolicies(longName), urls.CSRPoliciesRoute, csrName},
		{"CSRApprovers", get, urls.CSRApprovers("example.com/a b&c"), urls.CSRApproversRoute, nil},
		{"CSRApprove", post, urls.CSRApprove(longName), urls.CSRApproveRoute, csrName},
		{"CSRDeny", post, urls.CSRDeny(longName), urls.CSRDenyRoute, csrName},
		{"CSRIssue", post, urls.CSRIssue(longName), urls.CSRIssueRoute, csrName},
		{"CSRBulk", post, urls.CSRBulk, urls.CSRBulk, nil},
		{"CSRQueueGroup", get, urls.CSRQueueGroup(group), urls.CSRs, nil},
		{"CSRGroup", get, urls.CSRGroup(group, "deny-all"), urls.CSRGroupRoute, map[string]string{"id": group}},
		{"CSRGroupDecide", post, urls.CSRGroupDecide(group), urls.CSRGroupDecideRoute, map[string]string{"id": group}},

		{"FlowSchemas", get, urls.FlowSchemas, urls.FlowSchemas, nil},
		{"Classify", get, urls.Classify, urls.Classify, nil},
		{"ClassifyOld", get, urls.ClassifyOld, urls.ClassifyOld, nil},
		{"FlowSchemaFormNew", get, urls.FlowSchemaFormNew, urls.FlowSchemaFormNew, nil},
		{"FlowSchemaFormNew", post, urls.FlowSchemaFormNew, urls.FlowSchemaFormNew, nil},
		{"FlowSchemaForm", get, urls.FlowSchemaForm(longName), urls.FlowSchemaFormRoute, fsForm},
		{"FlowSchemaForm", post, urls.FlowSchemaForm(longName), urls.FlowSchemaFormRoute, fsForm},

		{"CRDs", get, urls.CRDs, urls.ListRoute, map[string]string{"kind": "crds"}},
		{"CRDSchema", get, urls.CRDSchema(crd, "v1", "spec.x"), urls.CRDSchemaRoute, map[string]string{"name": crd, "version": "v1"}},
		{"CRInstances", get, urls.CRInstances(crd), urls.CRInstancesRoute, crdName},
		{"CRInstance", get, urls.CRInstance(crd, "default", oddName), urls.CRInstanceRoute, cr},
		{"CRInstance", get, urls.CRInstance(crd, "", oddName), urls.CRInstanceRoute, clusterCR},
		{"CRNew", get, urls.CRNew(crd), urls.CRNewRoute, crdName},
		{"CRCreate", post, urls.CRCreate(crd), urls.CRCreateRoute, crdName},
		{"CRCleanup", get, urls.CRCleanup(crd), urls.CRCleanupRoute, crdName},
		{"CRCleanupConfirm", post, urls.CRCleanupConfirm(crd), urls.CRCleanupConfirmRoute, crdName},
		{"EditorOf", get, crEd.Edit, urls.CREditRoute, cr},
		{"EditorOf", post, crEd.Preview, urls.CRPreviewRoute, cr},
		{"EditorOf", post, crEd.Apply, urls.CRApplyRoute, cr},
		{"EditorOf", post, crEd.Rebase, urls.CRRebaseRoute, cr},
		{"EditorOf", get, crEd.Delete, urls.CRDeleteRoute, cr},
		{"EditorOf", post, crEd.Delete, urls.CRDeleteRoute, cr},

		{"Ledger", get, urls.Ledger, urls.Ledger, nil},
		{"LedgerCSV", get, urls.LedgerCSV, urls.LedgerCSV, nil},
		{"LedgerNDJSON", get, urls.LedgerNDJSON, urls.LedgerNDJSON, nil},
		{"LedgerUser", get, urls.LedgerUser("system:serviceaccount:kube-system:a b&c"), urls.Ledger, nil},
		{"LedgerSigner", get, urls.LedgerSigner("example.com/a b&c"), urls.Ledger, nil},
		{"LedgerObject", get, urls.LedgerObject("csrs", longName, ""), urls.LedgerObjectRoute, csr},
		{"LedgerObject", get, urls.LedgerObject(kind, longName, "0b6c-uid"), urls.LedgerObjectRoute, obj},
		{"LedgerObject", get, urls.LedgerObject("csrs", "history", ""), urls.LedgerObjectRoute, map[string]string{"kind": "csrs", "name": "history"}},

		{"Intercept", get, urls.Intercept + "?resource=pods", urls.Intercept, nil},
		{"PolicyReplay", get, urls.PolicyReplay(longName), urls.PolicyReplayRoute, map[string]string{"name": longName}},
		{"PolicyReplay", post, urls.PolicyReplay(longName), urls.PolicyReplayRoute, map[string]string{"name": longName}},
		{"BindingReplay", get, urls.BindingReplay(longName, "a b&c"), urls.PolicyReplayRoute, map[string]string{"name": longName}},
		{"ValidatingWebhookReplay", get, urls.ValidatingWebhookReplay(longName), urls.ValidatingWebhookReplayRoute, map[string]string{"name": longName}},
		{"ValidatingWebhookReplay", post, urls.ValidatingWebhookReplay(longName), urls.ValidatingWebhookReplayRoute, map[string]string{"name": longName}},
		{"MutatingWebhookReplay", get, urls.MutatingWebhookReplay(longName), urls.MutatingWebhookReplayRoute, map[string]string{"name": longName}},
		{"MutatingWebhookReplay", post, urls.MutatingWebhookReplay(longName), urls.MutatingWebhookReplayRoute, map[string]string{"name": longName}},
		{"PolicyAgreement", get, urls.PolicyAgreement(longName), urls.PolicyAgreementRoute, map[string]string{"name": longName}},
		{"PolicyReplayJob", get, urls.PolicyReplayJob(longName, "0a1b"), urls.PolicyReplayJobRoute, map[string]string{"name": longName, "job": "0a1b"}},
		{"PolicyReplayCancel", post, urls.PolicyReplayCancel(longName, "0a1b"), urls.PolicyReplayCancelRoute, map[string]string{"name": longName, "job": "0a1b"}},
		{"WhatIf", get, urls.WhatIf, urls.WhatIf, nil},
		{"WhatIf", post, urls.WhatIf, urls.WhatIf, nil},
		{"WhatIfBacktest", post, urls.WhatIfBacktest + "?level=a", urls.WhatIfBacktest, nil},
		{"WhatIfJob", get, urls.WhatIfJob("0a1b"), urls.WhatIfJobRoute, map[string]string{"job": "0a1b"}},
		{"WhatIfCancel", post, urls.WhatIfCancel("0a1b"), urls.WhatIfCancelRoute, map[string]string{"job": "0a1b"}},
		// The editor's replay: "-" is no name, and wins over the replay pages' :name.
		{"EditorReplay", post, urls.EditorReplay(kube.AdmissionPolicies, longName), urls.PolicyEditorReplayRoute, map[string]string{}},
		{"EditorReplay", post, urls.EditorReplay(kube.AdmissionPolicyBindings, ""), urls.BindingEditorReplayRoute, map[string]string{}},
		{"EditorReplay", post, urls.EditorReplay(kube.Webhooks, "a b&c"), urls.ValidatingWebhookEditorReplayRoute, map[string]string{}},
		{"EditorReplay", post, urls.EditorReplay(kube.MutatingWebhooks, longName), urls.MutatingWebhookEditorReplayRoute, map[string]string{}},
	}
}

// routeTable is the console's echo server with every route (the gallery too).
func routeTable(t *testing.T) *echo.Echo {
	t.Helper()
	return newFakeConsole(t, emptyCluster{}, denyAll{}, withSignInLimit(routeTableSignInLimit), func(d *Deps) { d.DevUI = true }).e
}

// TestEveryBuiltURLReachesItsRoute routes every address urls builds through
// the route table: it must reach the route meant for it, and the handler must
// see the very names that went in (253 characters, or characters that need
// escaping).
func TestEveryBuiltURLReachesItsRoute(t *testing.T) {
	e := routeTable(t)
	for _, b := range builtURLs() {
		t.Run(b.builder+" "+b.method+" "+b.route, func(t *testing.T) {
			r := httptest.NewRequest(b.method, b.url, nil)
			c := e.NewContext(r, httptest.NewRecorder())
			e.Router().Find(b.method, echo.GetPath(r), c)
			if c.Path() != b.route {
				t.Fatalf("%s reaches %q, want %q", b.url, c.Path(), b.route)
			}
			for name, want := range b.params {
				if got := c.Param(name); got != want {
					t.Errorf("%s: :%s = %q, want %q", b.url, name, got, want)
				}
			}
		})
	}
}

// TestEveryRoutePatternIsRegistered: each urls.*Route constant is a route of
// the table, so a pattern cannot drift from the route it names.
func TestEveryRoutePatternIsRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, rt := range routeTable(t).Routes() {
		registered[rt.Path] = true
	}
	consts, _ := urlsDecls(t)
	for _, name := range consts {
		if !strings.HasSuffix(name, "Route") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			pattern := routePattern(t, name)
			if !registered[pattern] {
				t.Errorf("urls.%s = %q is no route of the table", name, pattern)
			}
		})
	}
}

// TestEveryURLBuilderIsRouted: every exported function and address constant of
// package urls appears in builtURLs, so a new builder cannot skip the check.
func TestEveryURLBuilderIsRouted(t *testing.T) {
	// Not addresses: helpers that compose addresses, and the "_" namespace.
	// LintDrift and LintDanger are values of a list's lint= filter.
	notAddresses := []string{"Segment", "WithQuery", "ClusterScoped", "LintDrift", "LintDanger"}
	tested := map[string]bool{}
	for _, b := range builtURLs() {
		tested[b.builder] = true
	}
	consts, funcs := urlsDecls(t)
	for _, name := range append(consts, funcs...) {
		if strings.HasSuffix(name, "Route") || slices.Contains(notAddresses, name) {
			continue // patterns: TestEveryRoutePatternIsRegistered
		}
		if !tested[name] {
			t.Errorf("urls.%s is not in builtURLs: add what it builds and the route it must reach", name)
		}
	}
}

// urlsDecls lists the exported constants and functions of package urls.
func urlsDecls(t *testing.T) (consts, funcs []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "internal", "urls", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("package urls not found: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					funcs = append(funcs, d.Name.Name)
				}
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, s := range d.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.IsExported() {
							consts = append(consts, n.Name)
						}
					}
				}
			}
		}
	}
	return consts, funcs
}

// routePattern is the value of the urls constant name.
func routePattern(t *testing.T, name string) string {
	t.Helper()
	patterns := map[string]string{
		"ListRoute": urls.ListRoute, "ObjectRoute": urls.ObjectRoute, "HistoryRoute": urls.HistoryRoute,
		"LedgerObjectRoute": urls.LedgerObjectRoute, "PolicyReplayRoute": urls.PolicyReplayRoute,
		"ValidatingWebhookReplayRoute": urls.ValidatingWebhookReplayRoute, "MutatingWebhookReplayRoute": urls.MutatingWebhookReplayRoute,
		"PolicyAgreementRoute":    urls.PolicyAgreementRoute,
		"PolicyEditorReplayRoute": urls.PolicyEditorReplayRoute, "BindingEditorReplayRoute": urls.BindingEditorReplayRoute,
		"ValidatingWebhookEditorReplayRoute": urls.ValidatingWebhookEditorReplayRoute,
		"MutatingWebhookEditorReplayRoute":   urls.MutatingWebhookEditorReplayRoute,
		"PolicyReplayJobRoute":               urls.PolicyReplayJobRoute, "PolicyReplayCancelRoute": urls.PolicyReplayCancelRoute,
		"WhatIfJobRoute": urls.WhatIfJobRoute, "WhatIfCancelRoute": urls.WhatIfCancelRoute,
		"YAMLRoute": urls.YAMLRoute, "NewRoute": urls.NewRoute, "CreateRoute": urls.CreateRoute,
		"EditRoute": urls.EditRoute, "PreviewRoute": urls.PreviewRoute, "ApplyRoute": urls.ApplyRoute,
		"RebaseRoute": urls.RebaseRoute, "DeleteRoute": urls.DeleteRoute,
		"CSRCertificateRoute": urls.CSRCertificateRoute, "CSRNodeCheckRoute": urls.CSRNodeCheckRoute,
		"CSRSANsRoute":    urls.CSRSANsRoute,
		"CSRApproveRoute": urls.CSRApproveRoute, "CSRDenyRoute": urls.CSRDenyRoute,
		"CSRIssueRoute": urls.CSRIssueRoute, "CSRApproversRoute": urls.CSRApproversRoute,
		"CSRPoliciesRoute": urls.CSRPoliciesRoute, "CSRPolicyRoute": urls.CSRPolicyRoute,
		"CSRPolicyApproveRoute": urls.CSRPolicyApproveRoute,
		"CSRGroupRoute":         urls.CSRGroupRoute, "CSRGroupDecideRoute": urls.CSRGroupDecideRoute,
		"FlowSchemaFormRoute": urls.FlowSchemaFormRoute,
		"CRDSchemaRoute":      urls.CRDSchemaRoute, "CRInstancesRoute": urls.CRInstancesRoute,
		"CRInstanceRoute": urls.CRInstanceRoute, "CRNewRoute": urls.CRNewRoute, "CRCreateRoute": urls.CRCreateRoute,
		"CREditRoute": urls.CREditRoute, "CRPreviewRoute": urls.CRPreviewRoute, "CRApplyRoute": urls.CRApplyRoute,
		"CRRebaseRoute": urls.CRRebaseRoute, "CRDeleteRoute": urls.CRDeleteRoute,
		"CleanupRoute": urls.CleanupRoute, "CleanupConfirmRoute": urls.CleanupConfirmRoute,
		"CRCleanupRoute": urls.CRCleanupRoute, "CRCleanupConfirmRoute": urls.CRCleanupConfirmRoute,
	}
	p, ok := patterns[name]
	if !ok {
		t.Fatalf("urls.%s: add it to routePattern", name)
	}
	return p
}
