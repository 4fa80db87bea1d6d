package kube_test

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

func mapPtr(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

// TestCacheSharesEqualLabelMaps: objects with equal labels end up holding
// one map, with the labels each decoded; different labels, large sets and
// unstructured objects keep their own.
func TestCacheSharesEqualLabelMaps(t *testing.T) {
	csr := func(name string, labels map[string]string) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	strip := func(obj any) {
		t.Helper()
		if _, err := kube.StripForCache(obj); err != nil {
			t.Fatal(err)
		}
	}
	team := func(v string) map[string]string {
		return map[string]string{"labels-shared-test.example.com/team": v, "app": "labels-shared-test"}
	}
	a, b, other := csr("a", team("a")), csr("b", team("a")), csr("c", team("b"))
	for _, o := range []any{a, b, other} {
		strip(o)
	}
	if mapPtr(a.Labels) != mapPtr(b.Labels) {
		t.Error("equal labels: two maps")
	}
	if mapPtr(a.Labels) == mapPtr(other.Labels) || !maps.Equal(other.Labels, team("b")) || !maps.Equal(a.Labels, team("a")) {
		t.Errorf("labels changed: %v, %v", a.Labels, other.Labels)
	}
	strip(b) // idempotent
	if mapPtr(a.Labels) != mapPtr(b.Labels) || !maps.Equal(b.Labels, team("a")) {
		t.Errorf("again: %v", b.Labels)
	}

	many := func() map[string]string {
		m := map[string]string{}
		for i := range 9 {
			m[fmt.Sprintf("labels-shared-test/k%d", i)] = "v"
		}
		return m
	}
	x, y := csr("x", many()), csr("y", many())
	strip(x)
	strip(y)
	if mapPtr(x.Labels) == mapPtr(y.Labels) || !maps.Equal(x.Labels, many()) {
		t.Error("a large set is shared")
	}

	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "u",
		"labels": map[string]any{"labels-shared-test.example.com/team": "a", "app": "labels-shared-test"}}}}
	strip(u)
	if got := u.GetLabels(); !maps.Equal(got, team("a")) {
		t.Errorf("unstructured labels %v", got)
	}
}
