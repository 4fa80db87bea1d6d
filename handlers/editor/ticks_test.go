package editor

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestTableNamespaces: distinct, in order, cluster-scoped and unreadable
// rows skipped, at most max.
func TestTableNamespaces(t *testing.T) {
	row := func(ns string) metav1.TableRow {
		raw, _ := json.Marshal(metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}})
		return metav1.TableRow{Object: runtime.RawExtension{Raw: raw}}
	}
	table := &metav1.Table{Rows: []metav1.TableRow{row("b"), row("a"), row("b"), row(""), {Object: runtime.RawExtension{Raw: []byte("{")}}, row("c"), row("d")}}
	if got := tableNamespaces(table, 10); !slices.Equal(got, []string{"b", "a", "c", "d"}) {
		t.Errorf("all: %q", got)
	}
	if got := tableNamespaces(table, 2); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("at most 2: %q", got)
	}
}
