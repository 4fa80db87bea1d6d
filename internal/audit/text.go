package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// MaxDiff bounds one diff in a record or an activity event. A CRD's schema can
// be megabytes; a change to it rarely is, but a creation or a rewrite would be.
const MaxDiff = 64 << 10

// lastApplied is kubectl's copy of the applied object: it would repeat every
// field replaced below (a CSR's request), so it is replaced too.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// bulky lists the fields replaced by a digest in every rendering: PEM and
// CA bundles are long, say nothing a reviewer reads, and a CSR's request is
// the requester's key material (public, but not ours to copy into logs).
var bulky = [][]string{
	{"spec", "request"},       // CertificateSigningRequest: the PKCS#10 request
	{"status", "certificate"}, // CertificateSigningRequest: the issued certificate
	{"spec", "conversion", "webhook", "clientConfig", "caBundle"}, // CRD conversion webhook
}

// ObjectText renders obj as YAML for diffs and history: without managedFields
// and resourceVersion (they change on every write and have their own columns),
// with PEM and CA bundle data replaced by their size and SHA-256. A nil obj is
// "". obj is not modified.
func ObjectText(obj runtime.Object) (string, error) {
	if IsNil(obj) {
		return "", nil
	}
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = u.DeepCopy().Object
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return "", fmt.Errorf("audit: render object: %w", err)
		}
	}
	Scrub(m)
	out, err := yaml.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("audit: render object: %w", err)
	}
	return string(out), nil
}

// IsNil reports whether o is nil or a nil pointer in an interface (a write
// result's object when the write failed).
func IsNil(o runtime.Object) bool {
	if o == nil {
		return true
	}
	v := reflect.ValueOf(o)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Scrub removes from an object's map what ObjectText leaves out, in place.
func Scrub(m map[string]any) {
	unstructured.RemoveNestedField(m, "metadata", "managedFields")
	unstructured.RemoveNestedField(m, "metadata", "resourceVersion")
	if ann, ok, _ := unstructured.NestedStringMap(m, "metadata", "annotations"); ok {
		if v, has := ann[lastApplied]; has {
			ann[lastApplied] = digest(v)
			_ = unstructured.SetNestedStringMap(m, ann, "metadata", "annotations")
		}
	}
	for _, path := range bulky {
		digestField(m, path...)
	}
	if hooks, ok := m["webhooks"].([]any); ok {
		for _, h := range hooks {
			if hm, ok := h.(map[string]any); ok {
				digestField(hm, "clientConfig", "caBundle")
			}
		}
	}
}

func digestField(m map[string]any, path ...string) {
	v, ok, err := unstructured.NestedFieldNoCopy(m, path...)
	if !ok || err != nil {
		return
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return
	}
	if s == "" {
		return
	}
	_ = unstructured.SetNestedField(m, digest(s), path...)
}

// digest names data by size and hash: equal data gives equal text, so a diff
// still shows whether it changed.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("<%d bytes, sha256:%s>", len(s), hex.EncodeToString(sum[:8]))
}

// Diff returns the unified diff (3 lines of context) from before to after, and
// whether it was cut at MaxDiff. Equal texts give "".
func Diff(before, after string) (string, bool) {
	if before == after {
		return "", false
	}
	// Line edits (udiff.Lines): the default character-based edits can show
	// an unchanged line as removed and added again.
	d, err := udiff.ToUnified("before", "after", before, udiff.Lines(before, after), 3)
	if err != nil {
		return "", false
	}
	if len(d) <= MaxDiff {
		return d, false
	}
	cut := strings.LastIndexByte(d[:MaxDiff], '\n')
	if cut < 0 {
		cut = MaxDiff
	}
	return d[:cut+1], true
}

// tokenLike matches what must never reach the trail even when a user types or
// pastes it: JWTs (service-account and OIDC tokens) and bearer credentials.
var tokenLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*|(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}`)

// ScrubText replaces token-like substrings in free text.
func ScrubText(s string) string {
	return tokenLike.ReplaceAllString(s, "<redacted>")
}
