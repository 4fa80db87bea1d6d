package seed

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Decode splits a multi-document YAML (or JSON) stream into objects,
// skipping documents that hold only comments or whitespace.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		objs = append(objs, obj)
	}
}

// kind is a cluster-scoped kind devcluster knows how to create.
type kind struct {
	resource string
	// phase orders creation: webhook configurations go last so they cannot
	// interfere with creating anything else.
	phase int
	// newer kinds are served only by recent API servers (ValidatingAdmissionPolicy
	// v1 by 1.30+): where the server does not serve them they are skipped, not warned about.
	newer bool
	// custom kinds are served by a CRD created in an earlier phase: the API
	// server serves them a moment after the CRD is established.
	custom bool
}

var kinds = map[schema.GroupKind]kind{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {"customresourcedefinitions", 0, false, false},
	// The console's own CSR approval policies (deploy/base/csrapprovalpolicies.yaml).
	{Group: "clusterdesk.io", Kind: "CSRApprovalPolicy"}:                            {"csrapprovalpolicies", 1, false, true},
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                    {"csidrivers", 0, false, false},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:     {"prioritylevelconfigurations", 0, false, false},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                     {"flowschemas", 1, false, false},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: {"validatingwebhookconfigurations", 2, false, false},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   {"mutatingwebhookconfigurations", 2, false, false},
	// A binding names its policy: policies first.
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        {"validatingadmissionpolicies", 2, true, false},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: {"validatingadmissionpolicybindings", 3, true, false},
}

// resourceFor returns where obj is created, using the object's own version.
func resourceFor(obj *unstructured.Unstructured) (schema.GroupVersionResource, kind, error) {
	gvk := obj.GroupVersionKind()
	k, ok := kinds[gvk.GroupKind()]
	if !ok {
		return schema.GroupVersionResource{}, kind{}, fmt.Errorf("%s is not a kind devcluster loads", gvk.GroupKind())
	}
	return gvk.GroupVersion().WithResource(k.resource), k, nil
}
