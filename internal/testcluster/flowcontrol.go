package testcluster

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// EnvVersion names the environment variable that pins the Kubernetes version
// the tests must find (ready.json's "version", e.g. "v1.28.15"). `make test`
// sets it for the run against the old apiserver, so a devcluster of the wrong
// version fails the tests instead of quietly testing the other API version.
const EnvVersion = "DEVCLUSTER_KUBE_VERSION"

func checkVersion(t testing.TB, s State) {
	t.Helper()
	if want := os.Getenv(EnvVersion); want != "" && s.Version != want {
		t.Fatalf("the devcluster in $%s runs Kubernetes %q, but $%s asks for %q", EnvDir, s.Version, EnvVersion, want)
	}
}

// FlowcontrolGroup is the API group of FlowSchemas and PriorityLevelConfigurations.
const FlowcontrolGroup = "flowcontrol.apiserver.k8s.io"

// Flowcontrol reads and writes FlowSchemas and PriorityLevelConfigurations at
// the version the devcluster serves: v1 on Kubernetes 1.29+, v1beta3 on
// 1.26-1.28. Objects go in and come out as v1 Go types: v1beta3 has the same
// fields and JSON (v1 only made nominalConcurrencyShares a pointer), so tests
// written against v1 run unchanged on both.
type Flowcontrol struct {
	Version string // the served version the client uses: "v1" or "v1beta3"
	dyn     dynamic.Interface
}

// NewFlowcontrol asks discovery which flowcontrol version is served, v1 first.
func NewFlowcontrol(t testing.TB, cfg *rest.Config) *Flowcontrol {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := disc.ServerGroups()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name != FlowcontrolGroup {
			continue
		}
		for _, v := range []string{"v1", "v1beta3"} {
			if slices.ContainsFunc(g.Versions, func(gv metav1.GroupVersionForDiscovery) bool { return gv.Version == v }) {
				return &Flowcontrol{Version: v, dyn: dyn}
			}
		}
		t.Fatalf("%s serves %v, neither v1 nor v1beta3", FlowcontrolGroup, g.Versions)
	}
	t.Fatalf("the devcluster does not serve %s", FlowcontrolGroup)
	return nil
}

func (f *Flowcontrol) resource(plural string) dynamic.ResourceInterface {
	return f.dyn.Resource(schema.GroupVersionResource{Group: FlowcontrolGroup, Version: f.Version, Resource: plural})
}

// CreateFlowSchema creates fs at the served version.
func (f *Flowcontrol) CreateFlowSchema(ctx context.Context, fs *flowcontrolv1.FlowSchema) error {
	return f.create(ctx, "flowschemas", "FlowSchema", fs)
}

// CreatePriorityLevel creates pl at the served version.
func (f *Flowcontrol) CreatePriorityLevel(ctx context.Context, pl *flowcontrolv1.PriorityLevelConfiguration) error {
	return f.create(ctx, "prioritylevelconfigurations", "PriorityLevelConfiguration", pl)
}

// DeleteFlowSchema deletes the FlowSchema name.
func (f *Flowcontrol) DeleteFlowSchema(ctx context.Context, name string) error {
	return f.resource("flowschemas").Delete(ctx, name, metav1.DeleteOptions{})
}

// DeletePriorityLevel deletes the PriorityLevelConfiguration name.
func (f *Flowcontrol) DeletePriorityLevel(ctx context.Context, name string) error {
	return f.resource("prioritylevelconfigurations").Delete(ctx, name, metav1.DeleteOptions{})
}

// FlowSchemas lists every FlowSchema, read at the served version.
func (f *Flowcontrol) FlowSchemas(ctx context.Context) ([]*flowcontrolv1.FlowSchema, error) {
	return list[flowcontrolv1.FlowSchema](ctx, f.resource("flowschemas"))
}

// PriorityLevels lists every PriorityLevelConfiguration, read at the served version.
func (f *Flowcontrol) PriorityLevels(ctx context.Context) ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
	return list[flowcontrolv1.PriorityLevelConfiguration](ctx, f.resource("prioritylevelconfigurations"))
}

func (f *Flowcontrol) create(ctx context.Context, plural, kind string, obj runtime.Object) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion(FlowcontrolGroup + "/" + f.Version)
	u.SetKind(kind)
	_, err = f.resource(plural).Create(ctx, u, metav1.CreateOptions{})
	return err
}

func list[T any](ctx context.Context, r dynamic.ResourceInterface) ([]*T, error) {
	l, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*T, 0, len(l.Items))
	for i := range l.Items {
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, obj); err != nil {
			return nil, fmt.Errorf("%s %s: %w", l.Items[i].GetKind(), l.Items[i].GetName(), err)
		}
		out = append(out, obj)
	}
	return out, nil
}
