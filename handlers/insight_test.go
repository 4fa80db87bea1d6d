package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
)

// fixtureCluster serves the shared real-world manifests as if from the cache.
type fixtureCluster struct {
	emptyCluster
	crds     map[string]*apiextensionsv1.CustomResourceDefinition // whole, as in the fixtures
	cached   map[string]*apiextensionsv1.CustomResourceDefinition // schemas packed, as kube.Cache keeps them
	schemas  *kube.CRDSchemas
	webhooks map[string]*admissionregistrationv1.ValidatingWebhookConfiguration
	drivers  map[string]*storagev1.CSIDriver
	mutating map[string]*admissionregistrationv1.MutatingWebhookConfiguration
}

func (fixtureCluster) Ready() bool { return true }
func (f fixtureCluster) Kind(id kube.KindID) (kube.Kind, bool) {
	for _, k := range kube.AllKinds() {
		if k.ID == id {
			return k, true
		}
	}
	return kube.Kind{}, false
}

func notFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (f fixtureCluster) CRD(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	if c, ok := f.cached[name]; ok {
		return c, nil
	}
	return nil, notFound("customresourcedefinitions", name)
}

func (f fixtureCluster) CRDWithSchemas(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	c, err := f.CRD(name)
	if err != nil {
		return nil, err
	}
	return f.schemas.Unpack(c)
}

func (f fixtureCluster) Meta(id kube.KindID, name string) (metav1.Object, error) {
	if id == kube.CRDs {
		return f.CRD(name)
	}
	o, err := f.Object(id, name)
	if err != nil {
		return nil, err
	}
	return o.(metav1.Object), nil
}

// packCRDs returns copies of crds with their schemas packed into schemas, as
// kube.Cache's informer keeps them.
func packCRDs(schemas *kube.CRDSchemas, crds map[string]*apiextensionsv1.CustomResourceDefinition) map[string]*apiextensionsv1.CustomResourceDefinition {
	out := make(map[string]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for name, c := range crds {
		cp := c.DeepCopy()
		schemas.Pack(cp)
		out[name] = cp
	}
	return out
}

func (f fixtureCluster) Webhook(name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	if c, ok := f.webhooks[name]; ok {
		return c, nil
	}
	return nil, notFound("validatingwebhookconfigurations", name)
}

func (f fixtureCluster) CSIDriver(name string) (*storagev1.CSIDriver, error) {
	if c, ok := f.drivers[name]; ok {
		return c, nil
	}
	return nil, notFound("csidrivers", name)
}

func (f fixtureCluster) Object(id kube.KindID, name string) (runtime.Object, error) {
	switch id {
	case kube.CRDs:
		return f.CRDWithSchemas(name)
	case kube.Webhooks:
		return f.Webhook(name)
	case kube.CSIDrivers:
		return f.CSIDriver(name)
	case kube.MutatingWebhooks:
		return f.MutatingWebhook(name)
	}
	return nil, notFound(string(id), name)
}

type allowAll struct{}

func (allowAll) Can(context.Context, string, string, string, string, string) (bool, error) {
	return true, nil
}

// loadFixtures decodes every manifest in one folder of ../shared/fixtures/real.
func loadFixtures[T any](t testing.TB, dir string, name func(*T) string) map[string]*T {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../../shared/fixtures/real", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in ../shared/fixtures/real/%s (is ../shared beside the repository?): %v", dir, err)
	}
	out := map[string]*T{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			o := new(T)
			if err := yaml.Unmarshal([]byte(doc), o); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if n := name(o); n != "" {
				out[n] = o
			}
		}
	}
	return out
}

var (
	fixturesOnce sync.Once
	fixtures     fixtureCluster
)

// newFixtureServer serves the fixtures, decoded once for all tests (they
// are ~33 MB of YAML) and never changed.
func newFixtureServer(t testing.TB) (*testServer, fixtureCluster) {
	fixturesOnce.Do(func() {
		fixtures = fixtureCluster{
			crds:     loadFixtures(t, "customresourcedefinitions", func(c *apiextensionsv1.CustomResourceDefinition) string { return c.Name }),
			webhooks: loadFixtures(t, "validatingwebhookconfigurations", func(c *admissionregistrationv1.ValidatingWebhookConfiguration) string { return c.Name }),
			drivers:  loadFixtures(t, "csidrivers", func(c *storagev1.CSIDriver) string { return c.Name }),
			mutating: loadFixtures(t, "mutatingwebhookconfigurations", func(c *admissionregistrationv1.MutatingWebhookConfiguration) string { return c.Name }),
			schemas:  kube.NewCRDSchemas(),
		}
		fixtures.cached = packCRDs(fixtures.schemas, fixtures.crds)
	})
	fc := fixtures
	if len(fc.crds) == 0 {
		t.Fatal("fixtures failed to load in an earlier test")
	}
	return newFakeConsole(t, fc, allowAll{}), fc
}

// TestInsightPagesOnEveryRealManifest renders every version's schema page of
// every real-world CRD, and the detail page of every real-world webhook
// configuration and CSI driver, without a cluster. (The CRD detail pages,
// dominated by the generic YAML view, are walked by the integration test.)
func TestInsightPagesOnEveryRealManifest(t *testing.T) {
	ts, fc := newFixtureServer(t)
	sess := ts.login(t)
	var paths []string
	for name, c := range fc.crds {
		for _, v := range c.Spec.Versions {
			if v.Schema != nil {
				paths = append(paths, "/crds/"+name+"/schema/"+v.Name)
			}
		}
	}
	for name := range fc.webhooks {
		paths = append(paths, "/validatingwebhooks/"+name)
	}
	for name := range fc.drivers {
		paths = append(paths, "/csidrivers/"+name)
	}
	for name := range fc.mutating {
		paths = append(paths, "/mutatingwebhooks/"+name)
	}
	var biggest struct {
		path  string
		bytes int
		took  time.Duration
	}
	for _, p := range paths {
		r := httptest.NewRequest(http.MethodGet, p, nil)
		r.AddCookie(sess)
		start := time.Now()
		rec := ts.do(r)
		took := time.Since(start)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d", p, rec.Code)
			continue
		}
		if !strings.Contains(body, `data-testid="detail-name"`) && !strings.Contains(body, `data-testid="schema-title"`) {
			t.Errorf("%s: no title", p)
		}
		if strings.Contains(p, "/schema/") {
			if n := strings.Count(body, `data-testid="schema-field"`); n == 0 || n > present.SchemaBudget {
				t.Errorf("%s: %d schema fields rendered", p, n)
			}
			if len(body) > biggest.bytes {
				biggest.path, biggest.bytes, biggest.took = p, len(body), took
			}
		}
	}
	if biggest.bytes > 1<<20 {
		t.Errorf("largest schema page %s is %d bytes", biggest.path, biggest.bytes)
	}
	t.Logf("%d pages; largest schema page %s: %d bytes, rendered in %v", len(paths), biggest.path, biggest.bytes, biggest.took)
}

// BenchmarkLargestCRDSchemaPage serves the schema page of the CRD with the
// biggest manifest among the fixtures (Argo's CronWorkflow, 2.9 MB of YAML).
func BenchmarkLargestCRDSchemaPage(b *testing.B) {
	ts, fc := newFixtureServer(b)
	sess := ts.login(b)
	// The biggest manifest file is the CRD `ls -S` lists first.
	files, _ := filepath.Glob("../../shared/fixtures/real/customresourcedefinitions/*.yaml")
	var biggest string
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			biggest, size = f, st.Size()
		}
	}
	var path string
	for name, c := range fc.crds {
		data, _ := os.ReadFile(biggest)
		if strings.Contains(string(data), "\n  name: "+name+"\n") {
			path = "/crds/" + name + "/schema/" + c.Spec.Versions[0].Name
		}
	}
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.AddCookie(sess)
		rec := ts.do(r)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d", path, rec.Code)
		}
		b.SetBytes(int64(rec.Body.Len()))
	}
	b.ReportMetric(float64(size), "manifest-bytes")
	b.Logf("%s", path)
}

func TestSchemaPageAnswers404ForUnknownVersionsAndFields(t *testing.T) {
	ts, fc := newFixtureServer(t)
	sess := ts.login(t)
	var name, version string
	for n, c := range fc.crds {
		if len(c.Spec.Versions) > 0 && c.Spec.Versions[0].Schema != nil && (name == "" || n < name) {
			name, version = n, c.Spec.Versions[0].Name
		}
	}
	for path, want := range map[string]int{
		"/crds/" + name + "/schema/" + version:                      http.StatusOK,
		"/crds/" + name + "/schema/" + version + "?path=spec":       http.StatusOK,
		"/crds/" + name + "/schema/" + version + "?path=spec.nope9": http.StatusNotFound,
		"/crds/" + name + "/schema/v999":                            http.StatusNotFound,
		"/crds/no-such-crd.example.com/schema/v1":                   http.StatusNotFound,
	} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.AddCookie(sess)
		if rec := ts.do(r); rec.Code != want {
			t.Errorf("%s: status %d, want %d", path, rec.Code, want)
		}
	}
}

func (f fixtureCluster) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	out := make([]*admissionregistrationv1.ValidatingWebhookConfiguration, 0, len(f.webhooks))
	for _, w := range f.webhooks {
		out = append(out, w)
	}
	return out, nil
}

func TestInterceptFormValidatesAndAnswers(t *testing.T) {
	ts, _ := newFixtureServer(t)
	sess := ts.login(t)
	get := func(query string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, "/validatingwebhooks/intercept"+query, nil)
		r.AddCookie(sess)
		rec := ts.do(r)
		return rec.Code, rec.Body.String()
	}
	if code, body := get(""); code != http.StatusOK || !strings.Contains(body, `data-testid="intercept-form-el"`) || strings.Contains(body, `data-testid="intercept-result"`) {
		t.Errorf("empty form: status %d", code)
	}
	code, body := get("?operation=PATCH&version=&resource=&labels=a%3Db%3Dc")
	if code != http.StatusUnprocessableEntity {
		t.Errorf("bad form: status %d", code)
	}
	for _, field := range []string{"operation", "version", "resource", "labels"} {
		if !strings.Contains(body, `data-testid="intercept-`+field+`-error"`) {
			t.Errorf("no error shown for %s", field)
		}
	}
	// cert-manager's webhook covers every resource of its groups in v1.
	code, body = get("?operation=CREATE&group=cert-manager.io&version=v1&resource=certificates&namespace=default")
	if code != http.StatusOK || strings.Count(body, `data-testid="intercept-row"`) < 10 || !strings.Contains(body, "webhook.cert-manager.io") {
		t.Fatalf("answer: status %d", code)
	}
	if !strings.Contains(body, "1 webhook would be called") {
		t.Errorf("want exactly cert-manager's webhook called")
	}
}
