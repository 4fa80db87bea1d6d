package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// LastAppliedAnnotation is kubectl's copy of the whole object as last applied.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// StrippedPrefix starts the value the cache keeps in place of a dropped
// annotation, so that the YAML a page shows says what is not there.
const StrippedPrefix = "(not kept in clusterdesk's cache: "

// ManagedFieldsDepth is how deep the cache keeps each managedFields entry's
// field set. An object's history lists field paths to this depth
// (internal/managedfields.FieldPaths); deeper levels repeat, field by field, a
// CRD's whole schema.
const ManagedFieldsDepth = 4

// stripForCache is every informer's cache.TransformFunc: it runs on each
// object from a LIST or a WATCH before the object enters the shared cache, and
// drops what no page uses but costs memory on every object:
//   - the last-applied-configuration annotation (a second copy of the whole
//     object, as JSON; for a CRD, of its whole schema): replaced by its size
//     and SHA-256 (a change still shows as a change);
//   - managedFields' field sets below ManagedFieldsDepth (managers, operations,
//     times and the paths an object's history shows stay);
//   - copies of values that repeat across objects (intern.go), label maps,
//     a CSR's groups and usages and managedFields' field sets too
//     (labels_shared.go, lists_shared.go);
//   - a CSR's issued certificate (csr_certificate.go).
//
// The object is freshly decoded and not yet shared, so changing it in place is
// safe; the function is idempotent, as client-go asks. The editor and every
// write read the live object from the API server, never this copy.
func stripForCache(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil // not an object (a tombstone): nothing to strip
	}
	if _, generic := obj.(*unstructured.Unstructured); !generic {
		// (an unstructured object's GetLabels is a copy: nothing to share)
		if l := m.GetLabels(); len(l) > 0 {
			m.SetLabels(sharedLabels.share(l))
		}
	}
	if ann := m.GetAnnotations(); ann != nil {
		if v, ok := ann[LastAppliedAnnotation]; ok && !strings.HasPrefix(v, StrippedPrefix) {
			ann[LastAppliedAnnotation] = strippedValue(v)
		}
	}
	if mf := m.GetManagedFields(); len(mf) > 0 {
		for i := range mf {
			if mf[i].FieldsV1 == nil {
				continue
			}
			if raw, ok := trimFields(mf[i].FieldsV1.Raw, ManagedFieldsDepth); ok {
				mf[i].FieldsV1 = &metav1.FieldsV1{Raw: raw}
			}
		}
		internManagedFields(mf)
		m.SetManagedFields(exactManagedFields(mf))
	}
	if c, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
		internCSR(c)
		dropCertificate(c)
	}
	return obj, nil
}

// strippedValue is what the cache keeps of a dropped value.
func strippedValue(v string) string {
	sum := sha256.Sum256([]byte(v))
	return fmt.Sprintf("%s%d bytes, sha256 %s; the API server has it)", StrippedPrefix, len(v), hex.EncodeToString(sum[:6]))
}

// trimFields cuts a fieldsV1 set below depth levels: a node at the last level
// keeps its "." marker (the field is managed) and loses its children. It
// reports false when nothing was cut or raw is not a field set.
func trimFields(raw []byte, depth int) ([]byte, bool) {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, false
	}
	if !cutBelow(root, depth) {
		return nil, false
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, false
	}
	return out, true
}

func cutBelow(node map[string]any, depth int) bool {
	cut := false
	for k, v := range node {
		child, ok := v.(map[string]any)
		if !ok || k == "." {
			continue
		}
		if depth <= 1 {
			if len(child) > 1 || len(child) == 1 && child["."] == nil {
				node[k] = map[string]any{".": map[string]any{}}
				cut = true
			}
			continue
		}
		if cutBelow(child, depth-1) {
			cut = true
		}
	}
	return cut
}

// StripForCache is stripForCache, for tests and benchmarks.
var StripForCache = stripForCache

// Transform is every informer's cache.TransformFunc: stripForCache, then, for
// a CRD, each version's schema packed into schemas (crdschemas.go). Exported
// for benchmarks that fill a store as the informers do.
func Transform(schemas *CRDSchemas) cache.TransformFunc {
	return TransformWith(schemas, nil)
}

// TransformWith is Transform that also keeps a decided CSR's spec.request
// as summarize summarizes it (csr_request.go; nil: as it is).
func TransformWith(schemas *CRDSchemas, summarize RequestSummarizer) cache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := stripForCache(obj)
		if err != nil {
			return obj, err
		}
		switch o := obj.(type) {
		case *apiextensionsv1.CustomResourceDefinition:
			schemas.Pack(o)
		case *certificatesv1.CertificateSigningRequest:
			summarizeDecided(o, summarize)
		}
		return obj, nil
	}
}
