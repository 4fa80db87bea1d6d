package kube

import (
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestYAMLDropsManagedFields(t *testing.T) {
	obj := &storagev1.CSIDriver{
		TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
		ObjectMeta: metav1.ObjectMeta{
			Name:          "hostpath.csi.k8s.io",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)},
	}
	got, err := YAML(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: hostpath.csi.k8s.io
spec:
  attachRequired: false
`
	if got != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "managedFields") || len(obj.ManagedFields) != 1 {
		t.Errorf("managedFields must be dropped from the output only, not from the object")
	}
}
