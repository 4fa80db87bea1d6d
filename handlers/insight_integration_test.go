//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// fixtureNames lists the metadata.name of every manifest in one folder of
// ../shared/fixtures/real.
func fixtureNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../../shared/fixtures/real", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in ../shared/fixtures/real/%s: %v", dir, err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			var m struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m.Metadata.Name != "" {
				out = append(out, m.Metadata.Name)
			}
		}
	}
	return out
}

// TestEveryInsightPageOnTheDevcluster renders, through the handlers, the
// detail page of every CRD (and each version's schema page), webhook
// configuration, CSIDriver and FlowSchema in the cache, which holds every
// real-world manifest of ../shared/fixtures/real (make test seeds them).
func TestEveryInsightPageOnTheDevcluster(t *testing.T) {
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)

	crds, err := ls.cache.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := ls.cache.Webhooks()
	if err != nil {
		t.Fatal(err)
	}
	drivers, err := ls.cache.CSIDrivers()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := ls.cache.FlowSchemas()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	var paths []string
	for _, c := range crds {
		have["crds/"+c.Name] = true
		paths = append(paths, "/crds/"+c.Name)
		for _, v := range c.Spec.Versions {
			if v.Schema != nil {
				paths = append(paths, "/crds/"+url.PathEscape(c.Name)+"/schema/"+v.Name)
			}
		}
	}
	for _, w := range hooks {
		have["validatingwebhooks/"+w.Name] = true
		paths = append(paths, "/validatingwebhooks/"+w.Name)
	}
	mutating, err := ls.cache.MutatingWebhooks()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mutating {
		have["mutatingwebhooks/"+w.Name] = true
		paths = append(paths, "/mutatingwebhooks/"+w.Name)
	}
	for _, d := range drivers {
		have["csidrivers/"+d.Name] = true
		paths = append(paths, "/csidrivers/"+d.Name)
	}
	for _, f := range schemas {
		have["flowschemas/"+f.Name] = true
		paths = append(paths, "/flowschemas/"+f.Name)
	}
	for dir, kind := range map[string]string{"customresourcedefinitions": "crds", "validatingwebhookconfigurations": "validatingwebhooks",
		"csidrivers": "csidrivers", "flowschemas": "flowschemas", "mutatingwebhookconfigurations": "mutatingwebhooks"} {
		for _, name := range fixtureNames(t, dir) {
			if !have[kind+"/"+name] {
				t.Errorf("fixture %s/%s is not in the cache: was the devcluster seeded with FIXTURES=../shared/fixtures/real?", kind, name)
			}
		}
	}

	type served struct {
		bytes int
		took  time.Duration
	}
	pages := map[string]served{}
	for _, p := range paths {
		start := time.Now()
		rec := ls.do(newGet(p, sess))
		took := time.Since(start)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || strings.Contains(body, `data-testid="error"`) {
			t.Errorf("%s: status %d: %.300s", p, rec.Code, body)
			continue
		}
		if strings.Count(body, `data-testid="detail-name"`)+strings.Count(body, `data-testid="schema-title"`) != 1 {
			t.Errorf("%s: no title", p)
		}
		pages[p] = served{len(body), took}
	}
	t.Logf("%d CRDs, %d webhook configurations, %d CSI drivers, %d FlowSchemas: %d pages", len(crds), len(hooks), len(drivers), len(schemas), len(paths))

	// The numbers the issue asks for: the largest CRD (by its detail page,
	// which holds its YAML) and the largest schema page.
	var bigCRD, bigSchema string
	for p, s := range pages {
		switch {
		case strings.Contains(p, "/schema/"):
			if s.bytes > pages[bigSchema].bytes {
				bigSchema = p
			}
		case strings.HasPrefix(p, "/crds/"):
			if s.bytes > pages[bigCRD].bytes {
				bigCRD = p
			}
		}
	}
	for p, s := range pages {
		if strings.HasPrefix(p, bigCRD+"/schema/") || p == bigCRD || p == bigSchema {
			t.Logf("%s: %d bytes, served in %v", p, s.bytes, s.took)
		}
	}
}

// TestWebhookServiceLookups proves the Service lints against real Services:
// missing, without ready endpoints, and healthy.
func TestWebhookServiceLookups(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := "insight-webhook-" + strings.ToLower(time.Now().Format("150405.000000"))
	ns = strings.ReplaceAll(ns, ".", "")
	mustCreate(t, func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	for _, svc := range []string{"idle", "ready"} {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}}}, metav1.CreateOptions{})
			return err
		})
	}
	slice := func(svc string, ready bool) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}},
		}
	}
	for svc, ready := range map[string]bool{"idle": false, "ready": true} {
		mustCreate(t, func() error {
			_, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice(svc, ready), metav1.CreateOptions{})
			return err
		})
	}
	hook := func(name, svc string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name: name + ".insight.clusterdesk.dev", AdmissionReviewVersions: []string{"v1"},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: svc}},
			// A group nobody serves: this configuration never intercepts anything.
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"insight.clusterdesk.dev"}, APIVersions: []string{"v1"}, Resources: []string{"nothings"}}}},
		}
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{hook("missing", "absent"), hook("idle", "idle"), hook("ready", "ready")}}
	mustCreate(t, func() error {
		_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	doc := ls.pollPage(t, sess, "/validatingwebhooks/"+ns)
	want := map[string][]string{
		"missing": {admission.CodeServiceMissing},
		"idle":    {admission.CodeNoReadyEndpoints},
		"ready":   nil,
	}
	for name, codes := range want {
		card := doc.Find(`[data-testid="webhook-` + name + `.insight.clusterdesk.dev"]`)
		if card.Length() != 1 {
			t.Fatalf("%s: no card", name)
		}
		for _, code := range []string{admission.CodeServiceMissing, admission.CodeNoReadyEndpoints} {
			has := card.Find(`[data-testid="finding-`+code+`"]`).Length() == 1
			if has != (len(codes) > 0 && codes[0] == code) {
				t.Errorf("%s: finding %s shown %v", name, code, has)
			}
		}
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="webhook-ready.insight.clusterdesk.dev"] [data-testid="field-service"] dd`).First().Text()); !strings.Contains(got, "1 ready endpoint") {
		t.Errorf("ready service shown as %q", got)
	}
}

// TestCSIDriverUsage counts the StorageClasses, PersistentVolumes and
// VolumeAttachments of a driver created for the test.
func TestCSIDriverUsage(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	suffix := strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	drv := "usage-" + suffix + ".csi.clusterdesk.dev"
	bg := context.Background()
	mustCreate(t, func() error {
		_, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: drv}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(bg, drv, metav1.DeleteOptions{}) })
	mustCreate(t, func() error {
		_, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "usage-" + suffix}, Provisioner: drv}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = cs.StorageV1().StorageClasses().Delete(bg, "usage-"+suffix, metav1.DeleteOptions{}) })
	for _, pv := range []string{"usage-" + suffix + "-a", "usage-" + suffix + "-b"} {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: drv, VolumeHandle: pv}},
				}}, metav1.CreateOptions{})
			return err
		})
		t.Cleanup(func() { _ = cs.CoreV1().PersistentVolumes().Delete(bg, pv, metav1.DeleteOptions{}) })
	}
	va := "usage-" + suffix
	mustCreate(t, func() error {
		_, err := cs.StorageV1().VolumeAttachments().Create(ctx, &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: va},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: drv, NodeName: "no-such-node",
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("usage-" + suffix + "-a")}}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = cs.StorageV1().VolumeAttachments().Delete(bg, va, metav1.DeleteOptions{}) })

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	doc := ls.pollPage(t, sess, "/csidrivers/"+drv)
	for row, want := range map[string]string{"usage-storageclasses": "1", "usage-persistentvolumes": "2", "usage-csinodes": "0", "usage-volumeattachments": "1"} {
		cell := doc.Find(`[data-testid="` + row + `"] td`).Eq(1)
		if got := strings.TrimSpace(cell.Text()); got != want {
			t.Errorf("%s: count %q, want %s", row, got, want)
		}
	}
	if doc.Find(`[data-testid="csi-spec"] [data-testid="field-attachrequired"] .badge`).Length() != 1 {
		t.Error("attachRequired is not marked immutable")
	}
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}
