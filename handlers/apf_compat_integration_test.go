//go:build integration

package handlers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestFlowSchemaPagesAtTheServedVersion is the console's smoke test for both
// flowcontrol versions: make test runs it on Kubernetes 1.36 (v1) and on 1.28
// (v1beta3, no v1). The console must pick the version discovery offers, show a
// FlowSchema's and a priority level's detail pages, and preview and apply a YAML
// edit written at that version.
func TestFlowSchemaPagesAtTheServedVersion(t *testing.T) {
	es := newEditServer(t, testcluster.Admin)
	served := testcluster.NewFlowcontrol(t, testcluster.RestConfig(t, testcluster.Admin)).Version
	k := es.kind(t, kube.FlowSchemas)
	if pl := es.kind(t, kube.PriorityLevels); k.Version != served || pl.Version != served {
		t.Fatalf("console reads FlowSchemas at %s and priority levels at %s; the server's preferred is %s", k.Version, pl.Version, served)
	}
	t.Logf("Kubernetes %s: flowcontrol %s", testcluster.Require(t).Version, served)
	apiVersion := "apiVersion: " + testcluster.FlowcontrolGroup + "/" + served + "\n"

	name := uniq("compat-fs")
	es.create(t, kube.FlowSchemas, apiVersion+`kind: FlowSchema
metadata:
  name: `+name+`
spec:
  matchingPrecedence: 9000
  priorityLevelConfiguration:
    name: workload-low
  distinguisherMethod:
    type: ByUser
  rules:
  - subjects:
    - kind: ServiceAccount
      serviceAccount:
        namespace: compat
        name: "*"
    resourceRules:
    - verbs: ["list", "watch"]
      apiGroups: [""]
      resources: ["pods"]
      namespaces: ["*"]
`)
	path := "/flowschemas/" + name
	waitFor(t, "the cache to see the FlowSchema", 10*time.Second, func() bool { _, err := es.cache.FlowSchema(name); return err == nil })

	for _, page := range []struct{ path, want string }{
		{path, "workload-low"},
		{"/flowschemas/exempt", "exempt"},
		{"/prioritylevels/workload-low", "workload-low"},
	} {
		code, doc, _ := es.get(t, es.sess, page.path)
		yaml := doc.Find(`[data-testid="yaml"]`).Text()
		if code != http.StatusOK || !strings.Contains(doc.Find("main").Text(), page.want) || !strings.HasPrefix(strings.TrimSpace(yaml), strings.TrimSpace(apiVersion)) {
			t.Errorf("GET %s: status %d, YAML starts %.80q; want %q", page.path, code, yaml, apiVersion)
		}
	}
	// The priority level page of a v1beta3 server still shows its shares
	// (an int in v1beta3, a pointer in v1: the conversion must carry it).
	_, doc, _ := es.get(t, es.sess, "/prioritylevels/workload-low")
	if !strings.Contains(doc.Find(`[data-testid="yaml"]`).Text(), "nominalConcurrencyShares: 100") {
		t.Errorf("workload-low YAML lacks its 100 shares:\n%s", doc.Find(`[data-testid="yaml"]`).Text())
	}

	ed := es.openEditor(t, path+"/edit")
	if !strings.HasPrefix(ed.text, apiVersion) {
		t.Fatalf("editor text does not start with %q:\n%s", apiVersion, ed.text)
	}
	mine := strings.Replace(ed.text, "matchingPrecedence: 9000", "matchingPrecedence: 8500", 1)
	if mine == ed.text {
		t.Fatalf("editor text has no matchingPrecedence 9000:\n%s", ed.text)
	}
	code, doc, _ := es.submit(t, path+"/preview", ed.form(mine))
	if code != http.StatusOK {
		title, msg, causes := problem(doc)
		t.Fatalf("preview: status %d: %s: %s [%s]", code, title, msg, causes)
	}
	if added := doc.Find(`[data-testid="preview-diff"] [data-testid="diff-line"][data-kind="added"]`).Text(); !strings.Contains(added, "matchingPrecedence: 8500") {
		t.Fatalf("preview diff does not add the new precedence; added lines: %q", added)
	}
	if precedence(t, es.live(t, kube.FlowSchemas, name)) != 9000 {
		t.Fatal("preview changed the object")
	}
	code, _, hdr := es.submit(t, path+"/apply", ed.form(mine))
	if code != http.StatusSeeOther || hdr.Get("Location") != path {
		t.Fatalf("apply: status %d, Location %q", code, hdr.Get("Location"))
	}
	if got := precedence(t, es.live(t, kube.FlowSchemas, name)); got != 8500 {
		t.Fatalf("after apply: matchingPrecedence %d, want 8500", got)
	}
}

func precedence(t *testing.T, obj *unstructured.Unstructured) int64 {
	t.Helper()
	p, found, err := unstructured.NestedInt64(obj.Object, "spec", "matchingPrecedence")
	if !found || err != nil {
		t.Fatalf("%s has no spec.matchingPrecedence: %v", obj.GetName(), err)
	}
	return p
}
