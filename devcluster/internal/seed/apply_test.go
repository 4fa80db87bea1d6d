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
	flow := demoFlowcontrolItems(t)
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

// TestCreateAllRetriesAServerThatGaveUp: an API server too starved to finish
// a create in time answers 504; the object is tried again, not left out with a
// warning. A refusal of the object itself (422) is not retried.
func TestCreateAllRetriesAServerThatGaveUp(t *testing.T) {
	flow := demoFlowcontrolItems(t)
	fsV1 := schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}
	plV1 := fsV1.GroupVersion().WithResource("prioritylevelconfigurations")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		fsV1: "FlowSchemaList", plV1: "PriorityLevelConfigurationList",
	})
	invalid := ""
	for _, it := range flow {
		if it.obj.GetName() != "clusterdesk-auditor-reads" {
			invalid = it.obj.GetName()
		}
	}
	attempts := map[string]int{}
	dyn.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName()
		attempts[name]++
		switch {
		case name == "clusterdesk-auditor-reads" && attempts[name] <= 2:
			return true, nil, apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
		case name == "clusterdesk-auditor-reads":
			return false, nil, nil
		case name == invalid:
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: fsV1.Group, Kind: "FlowSchema"}, name, nil)
		}
		return false, nil, nil
	})

	var res Result
	createAll(context.Background(), dyn, flow, &res)
	if attempts["clusterdesk-auditor-reads"] != 3 {
		t.Errorf("the timed-out object was tried %d times, want 3", attempts["clusterdesk-auditor-reads"])
	}
	if res.Created != len(flow)-1 || len(res.Warnings) != 1 {
		t.Fatalf("created %d, warnings %v; want %d and the invalid one", res.Created, res.Warnings, len(flow)-1)
	}
	for name, n := range attempts {
		if name != "clusterdesk-auditor-reads" && n != 1 {
			t.Errorf("%s was tried %d times, want once", name, n)
		}
	}
}

// demoFlowcontrolItems is the demo set's FlowSchemas and priority levels.
func demoFlowcontrolItems(t *testing.T) []item {
	t.Helper()
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
	return flow
}
