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
	"k8s.io/client-go/util/retry"
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

// SetFlowSchemaLevel points the FlowSchema name at the priority level level.
func (f *Flowcontrol) SetFlowSchemaLevel(ctx context.Context, name, level string) error {
	return f.update(ctx, "flowschemas", name, func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedField(u.Object, level, "spec", "priorityLevelConfiguration", "name")
	})
}

// SetPriorityLevelSpec replaces the spec of the PriorityLevelConfiguration name.
func (f *Flowcontrol) SetPriorityLevelSpec(ctx context.Context, name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return err
	}
	return f.update(ctx, "prioritylevelconfigurations", name, func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedMap(u.Object, content, "spec")
	})
}

// PriorityLevelUID is the UID of the PriorityLevelConfiguration name: the
// API server names the level a request used by it, in the response header
// flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID.
func (f *Flowcontrol) PriorityLevelUID(ctx context.Context, name string) (string, error) {
	u, err := f.resource("prioritylevelconfigurations").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(u.GetUID()), nil
}

// update reads name, changes it and writes it back, again on a conflict
// (the API server writes the objects' status meanwhile).
func (f *Flowcontrol) update(ctx context.Context, plural, name string, change func(*unstructured.Unstructured) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := f.resource(plural).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := change(u); err != nil {
			return err
		}
		_, err = f.resource(plural).Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}
