package managedfields

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

func mf(manager, op string, at time.Time, fields string) metav1.ManagedFieldsEntry {
	tm := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op), Time: &tm,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestFieldPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want []string
	}{
		{"fields and self markers", `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:attachRequired":{}}}`,
			[]string{"metadata.labels.app", "spec.attachRequired"}},
		{"keyed list item", `{"f:status":{"f:conditions":{"k:{\"type\":\"Approved\"}":{".":{},"f:message":{},"f:type":{}}}}}`,
			[]string{"status.conditions[type=Approved].message", "status.conditions[type=Approved].type"}},
		{"set values and depth cap", `{"f:spec":{"f:volumeLifecycleModes":{"v:\"Persistent\"":{}},"f:a":{"f:b":{"f:c":{"f:d":{}}}}}}`,
			[]string{"spec.a.b.c", "spec.volumeLifecycleModes[Persistent]"}},
		{"empty", ``, nil},
		{"malformed", `{"f:spec":`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FieldPaths([]byte(tc.raw))
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("FieldPaths = %q, want %q", got, tc.want)
			}
		})
	}
	var many strings.Builder
	many.WriteString(`{"f:data":{`)
	for i := range 30 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"f:k%02d":{}`, i)
	}
	many.WriteString("}}")
	got := FieldPaths([]byte(many.String()))
	if len(got) != maxFields+1 || got[maxFields] != "… 5 more" {
		t.Fatalf("long list: %d paths, last %q", len(got), got[len(got)-1])
	}
}

func TestChangedCreditsNewAndNewerManagers(t *testing.T) {
	before := []metav1.ManagedFieldsEntry{mf("kubectl", "Update", t0, `{"f:spec":{}}`), mf("helm", "Apply", t0, `{"f:metadata":{}}`)}
	after := []metav1.ManagedFieldsEntry{mf("kubectl", "Update", t0, `{"f:spec":{}}`), mf("helm", "Apply", t0.Add(time.Minute), `{"f:metadata":{}}`),
		mf("clusterdesk", "Update", t0.Add(time.Minute), `{"f:spec":{"f:x":{}}}`)}
	got := Changed(before, after)
	if len(got) != 2 || got[0].Manager != "helm" || got[1].Manager != "clusterdesk" {
		t.Fatalf("Changed = %+v", got)
	}
	if len(Changed(after, after)) != 0 {
		t.Fatal("no change credited someone")
	}
	c := Credit(got)
	if c.Manager != "helm, clusterdesk" || c.Operation != "Apply, Update" || fmt.Sprint(c.Fields) != "[metadata spec.x]" {
		t.Fatalf("Credit = %+v", c)
	}
}

func TestOf(t *testing.T) {
	got := Of([]metav1.ManagedFieldsEntry{mf("kube-controller-manager", "Update", t0, `{"f:spec":{"f:fsGroupPolicy":{}}}`),
		mf("kubectl", "Apply", t0.Add(time.Hour), `{"f:spec":{}}`)})
	if len(got) != 2 || got[0].Manager != "kubectl" || got[1].Manager != "kube-controller-manager" || got[1].Operation != "Update" ||
		!got[1].Time.Equal(t0) || fmt.Sprint(got[1].Fields) != "[spec.fsGroupPolicy]" {
		t.Fatalf("%+v", got)
	}
}
