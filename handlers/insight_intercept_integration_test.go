//go:build integration

package handlers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// recorder is a webhook server that allows everything and records, per
// webhook (the URL path), the operation and name of each request it received.
type recorder struct {
	mu    sync.Mutex
	calls map[string][]string // "CREATE c01" → webhook names
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	key := string(review.Request.Operation) + " " + review.Request.Name
	r.mu.Lock()
	r.calls[key] = append(r.calls[key], strings.TrimPrefix(req.URL.Path, "/"))
	r.mu.Unlock()
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	_ = json.NewEncoder(w).Encode(review)
}

func (r *recorder) got(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.calls[key])
	slices.Sort(out)
	return slices.Compact(out)
}

// tlsServer serves h over https on 127.0.0.1 with a fresh CA, returned as PEM.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "insight-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// interceptCase is one request made to the API server and described to the form.
type interceptCase struct {
	name  string // object name, unique per case
	form  url.Values
	do    func(ctx context.Context) error
	op    string
	label string
}

// TestInterceptFormAgreesWithTheAPIServer registers webhooks that call a
// recording server, makes real requests (mostly dry runs), and checks that
// for each one the form names exactly the webhooks the API server called.
func TestInterceptFormAgreesWithTheAPIServer(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, bg := context.Background(), context.Background()
	sfx := strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	nsA, nsB := "icpt-a-"+sfx, "icpt-b-"+sfx
	for ns, env := range map[string]string{nsA: "prod", nsB: "dev"} {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"env": env}}}, metav1.CreateOptions{})
			return err
		})
		t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(bg, ns, metav1.DeleteOptions{}) })
	}

	// A CRD served in v1 and v2 (same schema, no conversion webhook), with status.
	group := "p" + sfx + ".insight.clusterdesk.dev"
	crdName := "probes." + group
	schemaProps := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec":   {Type: "object", XPreserveUnknownFields: ptr.To(true)},
			"status": {Type: "object", XPreserveUnknownFields: ptr.To(true)},
		}}}
	version := func(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage, Schema: schemaProps,
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}}
	}
	mustCreate(t, func() error {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: crdName},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
				Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "probes", Singular: "probe", Kind: "Probe", ListKind: "ProbeList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version("v1", true), version("v2", false)}},
		}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(bg, crdName, metav1.DeleteOptions{})
	})
	probes := func(v string) dynamic.NamespaceableResourceInterface {
		return dyn.Resource(schema.GroupVersionResource{Group: group, Version: v, Resource: "probes"})
	}
	probe := func(v, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/" + v, "kind": "Probe",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"x": "y"}}}
	}
	waitFor(t, "CRD served", 30*time.Second, func() bool {
		_, err := probes("v2").Namespace(nsA).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})

	// The webhooks, each calling the recorder at /<its short name>.
	rec := &recorder{calls: map[string][]string{}}
	srv, caPEM := tlsServer(t, rec)
	ops := func(o ...admissionregistrationv1.OperationType) []admissionregistrationv1.OperationType { return o }
	C, U, D, All := admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete, admissionregistrationv1.OperationAll
	type spec struct {
		name        string
		ops         []admissionregistrationv1.OperationType
		group, ver  string
		resources   []string
		scope       admissionregistrationv1.ScopeType
		exact       bool
		nsSel, oSel *metav1.LabelSelector
	}
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	blue := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "blue"}}
	notB := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{nsB}}}}
	specs := []spec{
		{name: "cm-create", ops: ops(C), ver: "v1", resources: []string{"configmaps"}, scope: "*"},
		{name: "cm-all", ops: ops(All), ver: "v1", resources: []string{"configmaps"}, scope: "*"},
		{name: "ns-prod", ops: ops(C), ver: "v1", resources: []string{"configmaps", "namespaces"}, scope: "*", nsSel: prod},
		{name: "obj-blue", ops: ops(C), ver: "v1", resources: []string{"configmaps"}, scope: "*", oSel: blue},
		{name: "obj-blue-changes", ops: ops(U, D), ver: "v1", resources: []string{"configmaps"}, scope: "*", oSel: blue},
		{name: "cluster-scope", ops: ops(C), ver: "v1", resources: []string{"namespaces", "configmaps"}, scope: admissionregistrationv1.ClusterScope},
		{name: "namespaced-scope", ops: ops(C), ver: "v1", resources: []string{"namespaces", "configmaps"}, scope: admissionregistrationv1.NamespacedScope},
		{name: "probe-status", ops: ops(U), group: group, ver: "v1", resources: []string{"probes/status"}, scope: "*"},
		{name: "probe-all-sub", ops: ops(U), group: group, ver: "v1", resources: []string{"probes/*"}, scope: "*"},
		{name: "probe-equivalent", ops: ops(C), group: group, ver: "v1", resources: []string{"probes"}, scope: "*"},
		{name: "probe-exact", ops: ops(C), group: group, ver: "v1", resources: []string{"probes"}, scope: "*", exact: true},
		{name: "probe-v2-exact", ops: ops(C), group: group, ver: "v2", resources: []string{"probes"}, scope: "*", exact: true},
		{name: "not-in-b", ops: ops(C), ver: "v1", resources: []string{"configmaps"}, scope: "*", nsSel: notB},
		{name: "secrets-delete", ops: ops(D), ver: "v1", resources: []string{"secrets"}, scope: "*"},
		// Core events are stored as events.k8s.io events: one resource in two groups.
		{name: "ev-core", ops: ops(C), ver: "v1", resources: []string{"events"}, scope: "*"},
	}
	// Mutating webhooks: called before the validating ones, matched alike.
	mutatingSpecs := []spec{
		{name: "m-cm-create", ops: ops(C), ver: "v1", resources: []string{"configmaps"}, scope: "*"},
		{name: "m-ev-group", ops: ops(C), group: "events.k8s.io", ver: "v1", resources: []string{"events"}, scope: "*"},
		{name: "m-ev-group-exact", ops: ops(C), group: "events.k8s.io", ver: "v1", resources: []string{"events"}, scope: "*", exact: true},
		{name: "m-probe-v2-exact", ops: ops(C), group: group, ver: "v2", resources: []string{"probes"}, scope: "*", exact: true},
	}
	vwcName := "icpt-" + sfx
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: vwcName}}
	for _, s := range specs {
		w := admissionregistrationv1.ValidatingWebhook{
			Name: s.name + ".icpt.clusterdesk.dev", AdmissionReviewVersions: []string{"v1"},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			TimeoutSeconds: ptr.To[int32](5), NamespaceSelector: s.nsSel, ObjectSelector: s.oSel,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/" + s.name), CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: s.ops, Rule: admissionregistrationv1.Rule{
				APIGroups: []string{s.group}, APIVersions: []string{s.ver}, Resources: s.resources, Scope: ptr.To(s.scope)}}},
		}
		if s.exact {
			w.MatchPolicy = ptr.To(admissionregistrationv1.Exact)
		}
		vwc.Webhooks = append(vwc.Webhooks, w)
	}
	mustCreate(t, func() error {
		_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(bg, vwcName, metav1.DeleteOptions{})
	})
	mwcName := "icpt-m-" + sfx
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: mwcName}}
	for _, s := range mutatingSpecs {
		w := admissionregistrationv1.MutatingWebhook{
			Name: s.name + ".icpt.clusterdesk.dev", AdmissionReviewVersions: []string{"v1"},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			TimeoutSeconds: ptr.To[int32](5), NamespaceSelector: s.nsSel, ObjectSelector: s.oSel,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/" + s.name), CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: s.ops, Rule: admissionregistrationv1.Rule{
				APIGroups: []string{s.group}, APIVersions: []string{s.ver}, Resources: s.resources, Scope: ptr.To(s.scope)}}},
		}
		if s.exact {
			w.MatchPolicy = ptr.To(admissionregistrationv1.Exact)
		}
		mwc.Webhooks = append(mwc.Webhooks, w)
	}
	mustCreate(t, func() error {
		_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(bg, mwcName, metav1.DeleteOptions{})
	})

	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	cm := func(ns, name string, lbl map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: lbl}}
	}
	// The API server's own webhook informer picks the configuration up a
	// moment after it is created: wait until the recorder sees a request.
	for i := 0; ; i++ {
		name := "warmup-" + sfx + "-" + strconv.Itoa(i)
		if _, err := cs.CoreV1().ConfigMaps(nsA).Create(ctx, cm(nsA, name, nil), dry); err != nil {
			t.Fatal(err)
		}
		if len(rec.got("CREATE "+name)) > 0 {
			break
		}
		if i > 200 {
			t.Fatal("the API server never called the recording webhook")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Objects the UPDATE and DELETE cases act on. Their creation is
	// recorded too, under CREATE.
	blueLbl, redLbl := map[string]string{"team": "blue"}, map[string]string{"team": "red"}
	for _, o := range []*corev1.ConfigMap{cm(nsA, "c05", blueLbl), cm(nsA, "c06", nil), cm(nsA, "c07", blueLbl), cm(nsB, "c08", nil)} {
		mustCreate(t, func() error {
			_, err := cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			return err
		})
	}
	mustCreate(t, func() error {
		_, err := cs.CoreV1().Secrets(nsB).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c16"}}, metav1.CreateOptions{})
		return err
	})
	for _, n := range []string{"c13", "c14", "c17"} {
		mustCreate(t, func() error {
			_, err := probes("v1").Namespace(nsA).Create(ctx, probe("v1", n), metav1.CreateOptions{})
			return err
		})
	}

	q := func(op, grp, ver, res, sub, ns, nsLabels, lbl, old string) url.Values {
		return url.Values{"operation": {op}, "group": {grp}, "version": {ver}, "resource": {res}, "subresource": {sub},
			"namespace": {ns}, "nsLabels": {nsLabels}, "labels": {lbl}, "oldLabels": {old}}
	}
	createCM := func(ns, name string, lbl map[string]string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, name, lbl), dry)
			return err
		}
	}
	updateCM := func(ns, name string, lbl map[string]string) func(context.Context) error {
		return func(ctx context.Context) error {
			o, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			o.Labels = lbl
			_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, o, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}
	}
	deleteCM := func(ns, name string) func(context.Context) error {
		return func(ctx context.Context) error {
			return cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}
	}
	createNS := func(name string, lbl map[string]string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}}, dry)
			return err
		}
	}
	createProbe := func(v, name string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := probes(v).Namespace(nsA).Create(ctx, probe(v, name), dry)
			return err
		}
	}
	updateProbe := func(v, name string, status bool) func(context.Context) error {
		return func(ctx context.Context) error {
			o, err := probes(v).Namespace(nsA).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			opts := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}
			if status {
				_ = unstructured.SetNestedField(o.Object, "ok", "status", "phase")
				_, err = probes(v).Namespace(nsA).UpdateStatus(ctx, o, opts)
			} else {
				_ = unstructured.SetNestedField(o.Object, "z", "spec", "x")
				_, err = probes(v).Namespace(nsA).Update(ctx, o, opts)
			}
			return err
		}
	}
	nsNew := "icpt-new-" + sfx
	cases := []interceptCase{
		{name: "c01", op: "CREATE", label: "configmap in a prod namespace, labelled team=blue", do: createCM(nsA, "c01", blueLbl), form: q("CREATE", "", "v1", "configmaps", "", nsA, "", "team=blue", "")},
		{name: "c02", op: "CREATE", label: "unlabelled configmap in a prod namespace", do: createCM(nsA, "c02", nil), form: q("CREATE", "", "v1", "configmaps", "", nsA, "", "", "")},
		{name: "c03", op: "CREATE", label: "configmap in the excluded dev namespace", do: createCM(nsB, "c03", nil), form: q("CREATE", "", "v1", "configmaps", "", nsB, "", "", "")},
		{name: "c04", op: "CREATE", label: "blue configmap in the dev namespace", do: createCM(nsB, "c04", blueLbl), form: q("CREATE", "", "v1", "configmaps", "", nsB, "", "team=blue", "")},
		{name: "c05", op: "UPDATE", label: "update from blue to red: the old object matches", do: updateCM(nsA, "c05", redLbl), form: q("UPDATE", "", "v1", "configmaps", "", nsA, "", "team=red", "team=blue")},
		{name: "c06", op: "UPDATE", label: "update adding blue: the new object matches", do: updateCM(nsA, "c06", blueLbl), form: q("UPDATE", "", "v1", "configmaps", "", nsA, "", "team=blue", "")},
		{name: "c07", op: "DELETE", label: "delete of a blue configmap", do: deleteCM(nsA, "c07"), form: q("DELETE", "", "v1", "configmaps", "", nsA, "", "", "team=blue")},
		{name: "c08", op: "DELETE", label: "delete of an unlabelled configmap", do: deleteCM(nsB, "c08"), form: q("DELETE", "", "v1", "configmaps", "", nsB, "", "", "")},
		{name: nsNew + "-p", op: "CREATE", label: "namespace labelled env=prod (cluster-scoped, own labels)", do: createNS(nsNew+"-p", map[string]string{"env": "prod"}), form: q("CREATE", "", "v1", "namespaces", "", nsNew+"-p", "env=prod", "env=prod", "")},
		{name: nsNew + "-d", op: "CREATE", label: "unlabelled namespace", do: createNS(nsNew+"-d", nil), form: q("CREATE", "", "v1", "namespaces", "", nsNew+"-d", "", "", "")},
		{name: "c11", op: "CREATE", label: "probe in v1", do: createProbe("v1", "c11"), form: q("CREATE", group, "v1", "probes", "", nsA, "", "", "")},
		{name: "c12", op: "CREATE", label: "probe in v2: Equivalent webhooks for v1 get it", do: createProbe("v2", "c12"), form: q("CREATE", group, "v2", "probes", "", nsA, "", "", "")},
		{name: "c13", op: "UPDATE", label: "probe status subresource", do: updateProbe("v1", "c13", true), form: q("UPDATE", group, "v1", "probes", "status", nsA, "", "", "")},
		{name: "c14", op: "UPDATE", label: "probe main resource", do: updateProbe("v1", "c14", false), form: q("UPDATE", group, "v1", "probes", "", nsA, "", "", "")},
		{name: "c15", op: "CREATE", label: "secret: no rule", do: func(ctx context.Context) error {
			_, err := cs.CoreV1().Secrets(nsA).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "c15"}}, dry)
			return err
		}, form: q("CREATE", "", "v1", "secrets", "", nsA, "", "", "")},
		{name: "c16", op: "DELETE", label: "secret delete", do: func(ctx context.Context) error {
			return cs.CoreV1().Secrets(nsB).Delete(ctx, "c16", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}, form: q("DELETE", "", "v1", "secrets", "", nsB, "", "", "")},
		{name: "c17", op: "UPDATE", label: "probe status through v2: Equivalent subresource rules", do: updateProbe("v2", "c17", true), form: q("UPDATE", group, "v2", "probes", "status", nsA, "", "", "")},
		{name: "c18", op: "CREATE", label: "core event: events.k8s.io rules match it across groups (Equivalent)", do: func(ctx context.Context) error {
			_, err := cs.CoreV1().Events(nsA).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "c18", Namespace: nsA},
				InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: nsA, Name: "c06"},
				Reason:         "Test", Message: "interception test", Type: corev1.EventTypeNormal}, dry)
			return err
		}, form: q("CREATE", "", "v1", "events", "", nsA, "", "", "")},
		{name: "c19", op: "CREATE", label: "events.k8s.io event: the core rule matches it across groups (Equivalent)", do: func(ctx context.Context) error {
			_, err := cs.EventsV1().Events(nsA).Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "c19", Namespace: nsA},
				EventTime: metav1.NowMicro(), ReportingController: "clusterdesk.dev/test", ReportingInstance: "test", Action: "Test",
				Reason: "Test", Note: "interception test", Type: corev1.EventTypeNormal,
				Regarding: corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: nsA, Name: "c06"}}, dry)
			return err
		}, form: q("CREATE", "events.k8s.io", "v1", "events", "", nsA, "", "", "")},
		{name: "c20", op: "CREATE", label: "probe in v2: the exact mutating v2 rule and the equivalent validating ones", do: createProbe("v2", "c20"), form: q("CREATE", group, "v2", "probes", "", nsA, "", "", "")},
	}

	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	waitFor(t, "the cache to hold the configuration", 30*time.Second, func() bool { _, err := ls.cache.Webhook(vwcName); return err == nil })
	waitFor(t, "the cache to hold the mutating configuration", 30*time.Second, func() bool { _, err := ls.cache.MutatingWebhook(mwcName); return err == nil })
	mutatingCalls := 0
	calledSomewhere := 0
	for _, tc := range cases {
		t.Run(tc.name+" "+tc.label, func(t *testing.T) {
			if err := tc.do(ctx); err != nil {
				t.Fatalf("request: %v", err)
			}
			got := rec.got(tc.op + " " + tc.name)
			want := formCalled(t, ls, sess, tc.form, vwcName, mwcName)
			if !slices.Equal(got, want) {
				t.Errorf("API server called %v; the form says %v", got, want)
			}
			t.Logf("called: %v", got)
			if len(got) > 0 {
				calledSomewhere++
			}
			for _, g := range got {
				if strings.HasPrefix(g, "m-") {
					mutatingCalls++
				}
			}
		})
	}
	if mutatingCalls < 4 {
		t.Errorf("only %d mutating calls: the mutating cases prove little", mutatingCalls)
	}
	if calledSomewhere < len(cases)/2 {
		t.Errorf("only %d of %d cases called any webhook: the cases prove little", calledSomewhere, len(cases))
	}
}

// formCalled submits the interception form and returns the short names of
// the webhooks of the configurations cfgs it says are called. Mutating
// webhooks must come before validating ones.
func formCalled(t *testing.T, ls *liveServer, sess *http.Cookie, form url.Values, cfgs ...string) []string {
	t.Helper()
	code, doc, _ := ls.get(t, sess, "/validatingwebhooks/intercept?"+form.Encode())
	if code != http.StatusOK {
		t.Fatalf("form: status %d: %s", code, doc.Find(`[data-testid$="-error"]`).Text())
	}
	var out []string
	seenValidating := false
	doc.Find(`[data-testid="intercept-row"]`).Each(func(_ int, row *goquery.Selection) {
		cells := row.Find("td")
		kind := strings.TrimSpace(cells.Eq(1).Text())
		if kind == "validating" {
			seenValidating = true
		} else if seenValidating {
			t.Errorf("a %s webhook listed after a validating one", kind)
		}
		if !slices.Contains(cfgs, strings.TrimSpace(cells.Eq(2).Text())) {
			return
		}
		if strings.TrimSpace(cells.Eq(4).Text()) == "called" {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cells.Eq(3).Text()), ".icpt.clusterdesk.dev"))
		}
	})
	slices.Sort(out)
	return out
}
