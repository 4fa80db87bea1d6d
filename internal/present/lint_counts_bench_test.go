package present

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
)

// benchCABundle is a PEM bundle of n self-signed CA certificates.
func benchCABundle(tb testing.TB, n int, now time.Time) []byte {
	var out []byte
	for i := range n {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			tb.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: fmt.Sprintf("bench-ca-%d", i)},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}

// megabyteSchema is an openAPIV3Schema of about 1 MB of JSON (8,000
// described properties), the size of the largest real-world CRDs.
func megabyteSchema() *apiextensionsv1.JSONSchemaProps {
	props := make(map[string]apiextensionsv1.JSONSchemaProps, 8000)
	for i := range 8000 {
		props[fmt.Sprintf("field%05d", i)] = apiextensionsv1.JSONSchemaProps{Type: "string",
			Description: fmt.Sprintf("Field number %d, described at the length real operators describe their fields at, which is long enough.", i)}
	}
	return &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: props}}}
}

// benchCRDs is n CRDs with three versions sharing one megabyte schema (as an
// unpacked object holds them: the worst case for the list; the cache keeps
// stubs), a conversion webhook with a two-certificate caBundle, and names the
// API server accepted.
func benchCRDs(tb testing.TB, n int, now time.Time) []*apiextensionsv1.CustomResourceDefinition {
	schema := megabyteSchema()
	ca := benchCABundle(tb, 2, now)
	items := make([]*apiextensionsv1.CustomResourceDefinition, n)
	for i := range items {
		group := fmt.Sprintf("g%04d.bench.example.com", i)
		names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList", ShortNames: []string{"th"}}
		var versions []apiextensionsv1.CustomResourceDefinitionVersion
		for _, v := range []string{"v1", "v1beta2", "v1beta1"} {
			versions = append(versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: v == "v1",
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema}})
		}
		items[i] = &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "things." + group, ResourceVersion: "1", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Names: names, Scope: apiextensionsv1.NamespaceScoped, Versions: versions,
				Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{CABundle: ca,
						Service: &apiextensionsv1.ServiceReference{Namespace: "bench", Name: "convert", Path: ptr.To("/convert")}}}}},
			Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names, StoredVersions: []string{"v1beta1", "v1"},
				Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: "True"}}},
		}
	}
	return items
}

// BenchmarkCRDListLints lays out the first page of a list of 2,000 CRDs,
// sorted by the lint column: every CRD is linted on every view.
func BenchmarkCRDListLints(b *testing.B) {
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	items := benchCRDs(b, 2000, now)
	benchListViews(b, func() int { return len(CRDList(items, ListQuery{Sort: "lints", Desc: true}, now).Rows) })
}

// benchListViews measures a list view twice: "cold", every object linted
// (the first view, or every view after each object changed), and "warm",
// counts remembered per resourceVersion (admission.ListTally).
func benchListViews(b *testing.B, view func() int) {
	for _, cold := range []bool{true, false} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			admission.ForgetTallies()
			view()
			for b.Loop() {
				if cold {
					admission.ForgetTallies()
				}
				if n := view(); n != PageSize {
					b.Fatalf("%d rows", n)
				}
			}
		})
	}
}

// BenchmarkWebhookListLints lays out the first page of a list of 2,000
// ValidatingWebhookConfigurations of 10 webhooks each (every one with a
// two-certificate caBundle), sorted by the lint column.
func BenchmarkWebhookListLints(b *testing.B) {
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	ca := benchCABundle(b, 2, now)
	items := make([]*admissionregistrationv1.ValidatingWebhookConfiguration, 2000)
	for i := range items {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("bench-%04d", i), ResourceVersion: "1", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
		for j := range 10 {
			c.Webhooks = append(c.Webhooks, admissionregistrationv1.ValidatingWebhook{
				Name:                    fmt.Sprintf("w%d.bench.example.com", j),
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{CABundle: ca, Service: &admissionregistrationv1.ServiceReference{Namespace: "bench", Name: "hook"}},
				Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"*"}, Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}}},
				FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
			})
		}
		items[i] = c
	}
	benchListViews(b, func() int { return len(WebhookList(items, ListQuery{Sort: "lints", Desc: true}, now).Rows) })
}
