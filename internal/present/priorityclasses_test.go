package present

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/views/model"
)

func priorityClass(name string, value int32) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}

// The list says what an admin decides by: the value, which class pods get by
// default, and which classes never preempt; it sorts by value as a number,
// negative values included.
func TestPriorityClassListShowsValueDefaultAndPreemption(t *testing.T) {
	now := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	batch := priorityClass("batch", -10)
	batch.PreemptionPolicy = ptr.To(corev1.PreemptNever)
	def := priorityClass("default-web", 1000)
	def.GlobalDefault, def.Description = true, "web services"
	items := []*schedulingv1.PriorityClass{def, priorityClass("system-node-critical", 2000001000), batch, priorityClass("low", -200)}

	p := PriorityClassList(items, ListQuery{Sort: "value"}, now)
	var names []string
	for _, r := range p.Rows {
		names = append(names, r.Name)
	}
	if want := []string{"low", "batch", "default-web", "system-node-critical"}; !slices.Equal(names, want) {
		t.Errorf("sorted by value: %v, want %v", names, want)
	}
	if p.KindID != "priorityclasses" {
		t.Errorf("KindID %q", p.KindID)
	}
	cells := func(name string) []string {
		for _, r := range p.Rows {
			if r.Name == name {
				var out []string
				for _, c := range r.Cells[1:] {
					out = append(out, c.Text)
				}
				return out
			}
		}
		t.Fatalf("no row %s", name)
		return nil
	}
	if got, want := cells("default-web")[:4], []string{"1000", "yes", "PreemptLowerPriority", "web services"}; !slices.Equal(got, want) {
		t.Errorf("default-web cells %v, want %v (unset preemption is PreemptLowerPriority)", got, want)
	}
	if got := cells("batch")[:3]; !slices.Equal(got, []string{"-10", "no", "Never"}) {
		t.Errorf("batch cells %v", got)
	}
}

func TestPriorityClassDetailMarksSystemClasses(t *testing.T) {
	now := time.Now()
	field := func(p model.DetailPage, label string) string {
		for _, f := range p.Fields {
			if f.Label == label {
				return f.Value
			}
		}
		t.Fatalf("no field %s in %+v", label, p.Fields)
		return ""
	}
	sys := PriorityClassDetail(priorityClass("system-cluster-critical", 2000000000), now)
	if sys.Status.Text != "System" || field(sys, "Value") != "2000000000" || field(sys, "Global default") != "no" {
		t.Errorf("system class: status %q, fields %+v", sys.Status.Text, sys.Fields)
	}
	never := priorityClass("batch", 5)
	never.PreemptionPolicy, never.GlobalDefault = ptr.To(corev1.PreemptNever), true
	user := PriorityClassDetail(never, now)
	if user.Status.Text != "User" || field(user, "Preemption") != "Never" || field(user, "Global default") != "yes" {
		t.Errorf("user class: status %q, fields %+v", user.Status.Text, user.Fields)
	}
	if user.KindID != "priorityclasses" || user.Name != "batch" {
		t.Errorf("page of %s %s", user.KindID, user.Name)
	}
}
