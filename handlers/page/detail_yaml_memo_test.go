package page

import (
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestSetYAMLPerVersion: a new resourceVersion of an object gets its own
// YAML, never the remembered one of the version before.
func TestSetYAMLPerVersion(t *testing.T) {
	d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "memo.example.com", UID: "u1", ResourceVersion: "1", Labels: map[string]string{"v": "one"}}}
	var p model.DetailPage
	if err := SetYAML(&p, kube.CSIDrivers, d.Name, d); err != nil || !strings.Contains(p.YAML, "v: one") {
		t.Fatalf("first: %v %q", err, p.YAML)
	}
	d2 := d.DeepCopy()
	d2.ResourceVersion, d2.Labels["v"] = "2", "two"
	p = model.DetailPage{}
	if err := SetYAML(&p, kube.CSIDrivers, d.Name, d2); err != nil || !strings.Contains(p.YAML, "v: two") {
		t.Fatalf("a new version must show its own YAML: %v %q", err, p.YAML)
	}
	p = model.DetailPage{}
	if err := SetYAML(&p, kube.CSIDrivers, d.Name, d); err != nil || !strings.Contains(p.YAML, "v: one") {
		t.Fatalf("the first version again: %v %q", err, p.YAML)
	}
}
