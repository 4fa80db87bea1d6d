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

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/kube"
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

func (f fixtureCluster) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	out := make([]*admissionregistrationv1.ValidatingWebhookConfiguration, 0, len(f.webhooks))
	for _, w := range f.webhooks {
		out = append(out, w)
	}
	return out, nil
}
