package replay

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
)

// namespaces are today's namespaces by name: the namespaceSelector is
// matched against their labels now, not as they were at the write (the
// API server's own matcher reads its informer's namespaces the same way,
// at the time it runs). It is the NamespaceLister the matcher asks; a
// namespace deleted since is answered with no labels (never NotFound, on
// which the matcher would ask the API server with a client it does not
// have here) and the request is counted (Summary.NamespaceGone).
type namespaces map[string]*corev1.Namespace

func (n namespaces) List(selector labels.Selector) ([]*corev1.Namespace, error) {
	var out []*corev1.Namespace
	for _, ns := range n {
		if selector.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	return out, nil
}

func (n namespaces) Get(name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return &corev1.Namespace{}, nil
}

// newMatcher is the API server's policy matcher over today's namespaces.
// Its client is only asked when the lister answers NotFound, which
// namespaces never does.
func newMatcher(ns namespaces) *matching.Matcher { return matching.NewMatcher(ns, nil) }

// objectInterfaces answer the matcher's equivalent resources: none known
// (an empty registry), so matchPolicy Equivalent matches the request's own
// resource only; the recorded write names the version it was sent as.
var objectInterfaces = admission.NewObjectInterfacesFromScheme(runtime.NewScheme())

// policyMatches tells whether the policy's matchConstraints match the
// request, and bindingMatches whether one binding's matchResources do: Dispatch
// in k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go
// asks the matcher for the policy once (DefinitionMatches), then for each
// binding (BindingMatches). An error is a config error the failurePolicy
// decides.
func (c *compiled) policyMatches(m *matching.Matcher, attr admission.Attributes) (bool, error) {
	ok, _, _, err := m.Matches(attr, objectInterfaces, c.policy)
	return ok, err
}

func (b *compiledBinding) matches(m *matching.Matcher, attr admission.Attributes) (bool, error) {
	if b.criteria.all {
		return true, nil
	}
	ok, _, _, err := m.Matches(attr, objectInterfaces, b.criteria)
	return ok, err
}
