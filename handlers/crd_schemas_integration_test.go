//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// largestFixtureCRD is the real-world CRD with the biggest manifest (Argo
// Workflows' CronWorkflow, 2.9 MB of YAML), loaded by the devcluster's seed.
const largestFixtureCRD = "cronworkflows.argoproj.io"

// TestPackedSchemasShowAsServed: the cache keeps the largest real CRD's
// schemas packed, and its detail page, schema explorer and YAML show what
// the API server serves (read here directly, as the authority).
func TestPackedSchemasShowAsServed(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	ext := apiextensionsclient.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	live, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), largestFixtureCRD, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: %v (was the devcluster seeded with the real-world fixtures?)", largestFixtureCRD, err)
	}
	cached, err := ls.cache.CRD(largestFixtureCRD)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range cached.Spec.Versions {
		if v.Schema == nil || !kube.IsSchemaStub(v.Schema.OpenAPIV3Schema) {
			t.Errorf("%s: the cache keeps the schema decoded", v.Name)
		}
	}
	version := live.Spec.Versions[0].Name

	// Detail page: the versions table counts the schema's fields.
	code, doc := ls.getDoc(t, sess, "/crds/"+largestFixtureCRD)
	want := "explore " + strconv.Itoa(crd.Tree(live.Spec.Versions[0].Schema.OpenAPIV3Schema).Descendants) + " fields"
	if row := doc.Find(`[data-testid="version-row"]`).First().Text(); code != http.StatusOK || !strings.Contains(row, want) {
		t.Errorf("detail page: status %d, versions row %q; want %q", code, strings.Join(strings.Fields(row), " "), want)
	}

	// Schema explorer: the same fields as the served schema gives, on the
	// top page and focused deeper.
	for _, path := range []string{"", "spec", "spec.workflowSpec.templates[]"} {
		page, err := present.CRDSchema(live, version, path)
		if err != nil {
			t.Fatalf("%q: %v", path, err)
		}
		wantPaths := map[string]bool{}
		collectPaths(page.Root, wantPaths)
		code, doc := ls.getDoc(t, sess, urls.CRDSchema(largestFixtureCRD, version, path))
		gotPaths := map[string]bool{}
		doc.Find(`[data-testid="schema-field"]`).Each(func(_ int, s *goquery.Selection) { gotPaths[s.AttrOr("data-path", "?")] = true })
		if code != http.StatusOK || len(gotPaths) < 10 || !equality.Semantic.DeepEqual(gotPaths, wantPaths) {
			t.Errorf("schema page %q: status %d, %d fields shown, %d in the served schema", path, code, len(gotPaths), len(wantPaths))
		}
	}

	// YAML: the whole object, schemas included.
	r, _ := http.NewRequest(http.MethodGet, "/crds/"+largestFixtureCRD+"/yaml", nil)
	r.AddCookie(sess)
	rec := ls.do(r)
	var shown apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(rec.Body.Bytes(), &shown); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("YAML: status %d, %v", rec.Code, err)
	}
	if strings.Contains(rec.Body.String(), kube.SchemaStubPrefix) || !equality.Semantic.DeepEqual(shown.Spec.Versions, live.Spec.Versions) {
		t.Errorf("the YAML's versions differ from the served ones (%d bytes of YAML)", rec.Body.Len())
	}
}

// TestHistoryShowsASchemaChange: a schema change, packed in the cache,
// still shows in the CRD's history diff (as its stub's new digest).
func TestHistoryShowsASchemaChange(t *testing.T) {
	ac := newAuditConsole(t, testcluster.Admin, true)
	sess := ac.login(t)
	ext := apiextensionsclient.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	ctx := context.Background()
	group := fmt.Sprintf("a%d.crdmem.bench.clusterdesk.test", time.Now().UnixNano())
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", ListKind: "GadgetList", Plural: "gadgets", Singular: "gadget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Description: "before"}}}}}},
		},
	}
	c, err := crds.Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), c.Name, metav1.DeleteOptions{}) })
	waitFor(t, "the cache to see the CRD", 10*time.Second, func() bool { _, err := ac.cache.CRD(c.Name); return err == nil })
	before := stubDigest(t, ac.liveServer, c.Name)
	for {
		c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextensionsv1.JSONSchemaProps{Type: "object", Description: "after"}
		_, err = crds.Update(ctx, c, metav1.UpdateOptions{})
		if err == nil {
			break
		}
		// The API server updates the status (Established) meanwhile: read again.
		if c, err = crds.Get(ctx, c.Name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var after string
	waitFor(t, "the cache to see the new schema", 10*time.Second, func() bool {
		after = stubDigest(t, ac.liveServer, c.Name)
		return after != before
	})
	// The diff shows the stub's digest replaced (other updates, of the
	// status, come and go meanwhile).
	changed := func(diff string) bool {
		var removed, added bool
		for line := range strings.Lines(diff) {
			removed = removed || strings.HasPrefix(line, "-") && strings.Contains(line, before)
			added = added || strings.HasPrefix(line, "+") && strings.Contains(line, after)
		}
		return removed && added
	}
	waitFor(t, "the ledger to hold the schema change", 10*time.Second, func() bool {
		for _, e := range ac.history(t, kube.CRDs, c.Name) {
			if e.Action == ledger.ActionUpdate && changed(e.Diff) {
				return true
			}
		}
		return false
	})
	code, doc, _ := ac.get(t, sess, urls.LedgerObject(kube.CRDs, c.Name, ""))
	found := false
	doc.Find(`[data-testid="ledger-step"]`).Each(func(_ int, e *goquery.Selection) {
		added := e.Find(`[data-testid="diff-line"][data-kind="added"]`).Text()
		removed := e.Find(`[data-testid="diff-line"][data-kind="removed"]`).Text()
		found = found || strings.Contains(added, after) && strings.Contains(removed, before)
	})
	if code != http.StatusOK || !found {
		t.Errorf("history: status %d; no entry's diff replaces schema digest %s with %s", code, before, after)
	}
}

// stubDigest is the schema digest the cache's stub of name's first version gives.
func stubDigest(t *testing.T, ls *liveServer, name string) string {
	t.Helper()
	c, err := ls.cache.CRD(name)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Description
	_, rest, ok := strings.Cut(d, "sha256 ")
	digest, _, _ := strings.Cut(rest, ";")
	if !ok || !kube.IsSchemaStub(c.Spec.Versions[0].Schema.OpenAPIV3Schema) || len(digest) != 16 {
		t.Fatalf("stub %q", d)
	}
	return digest
}

func collectPaths(n model.SchemaNode, into map[string]bool) {
	for _, c := range n.Children {
		into[c.Path] = true
		collectPaths(c, into)
	}
}
