package seed

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestCreateAllFallsBackToV1beta3 plays a Kubernetes 1.28 server, which has no
// flowcontrol v1: the demo's v1 FlowSchemas and priority level must load as v1beta3.
func TestCreateAllFallsBackToV1beta3(t *testing.T) {
	items, err := demoItems()
	if err != nil {
		t.Fatal(err)
	}
	var flow []item
	for _, it := range items {
		if it.obj.GroupVersionKind().Group == "flowcontrol.apiserver.k8s.io" {
			flow = append(flow, it)
		}
	}
	if len(flow) != 4 {
		t.Fatalf("demo has %d flowcontrol objects, want 4", len(flow))
	}
	fsV1beta3 := schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Resource: "flowschemas"}
	plV1beta3 := fsV1beta3.GroupVersion().WithResource("prioritylevelconfigurations")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		fsV1beta3: "FlowSchemaList", plV1beta3: "PriorityLevelConfigurationList",
	})
	dyn.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetResource().Version == "v1" {
			return true, nil, apierrors.NewNotFound(a.GetResource().GroupResource(), "")
		}
		return false, nil, nil
	})

	var res Result
	createAll(context.Background(), dyn, flow, &res)
	if res.Created != 4 || len(res.Warnings) != 0 {
		t.Fatalf("created %d, warnings %v; want 4 and none", res.Created, res.Warnings)
	}
	got, err := dyn.Resource(fsV1beta3).Get(context.Background(), "clusterdesk-auditor-reads", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != "flowcontrol.apiserver.k8s.io/v1beta3" {
		t.Errorf("stored as %s", got.GetAPIVersion())
	}
	if flow[0].obj.GetAPIVersion() != "flowcontrol.apiserver.k8s.io/v1" {
		t.Error("the fallback changed the manifest's own object")
	}
}
