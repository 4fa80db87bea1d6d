package replay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
)

// Version is one version of a policy and its bindings: the draft, or what
// the cluster runs. The API server evaluates a policy once for each binding
// that binds it, each with its own matchResources, paramRef and
// validationActions (Dispatch in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go
// loops over the policy's hook.Bindings): a version holds them all. A
// version without bindings matches nothing, as a policy nothing binds.
type Version struct {
	Policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// BadDraftError is a version that cannot be replayed as written: an
// expression that does not compile, a selector that does not parse, a
// binding of another policy, no validationActions, a paramKind the API
// server does not serve. The replay refuses it before reading any write.
type BadDraftError struct {
	Which string // "draft" or "deployed"
	Err   error
	What  string // what cannot be replayed: "policy" when ""
}

func (e *BadDraftError) Error() string {
	return fmt.Sprintf("the %s %s cannot be replayed: %v", e.Which, cmp.Or(e.What, "policy"), e.Err)
}
func (e *BadDraftError) Unwrap() error { return e.Err }

// compiled is a version ready to evaluate many requests: the policy's CEL
// and matchConstraints once, each binding's matchResources once.
type compiled struct {
	Policy *admissionregistrationv1.ValidatingAdmissionPolicy
	cel    *celmatch.CompiledPolicy
	policy criteria // the policy's matchConstraints
	// params is the policy's paramKind's resource, when it takes params.
	params *paramKind
	// bindings by name: the first failed decision's message is the one a
	// verdict keeps, so their order is fixed.
	bindings []compiledBinding
}

// compiledBinding is one binding of a compiled version.
type compiledBinding struct {
	*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	criteria criteria // its matchResources (all when it has none)
}

// compile checks and compiles v; which names it in errors.
func compile(v Version, which string, kinds paramKinds) (*compiled, error) {
	bad := func(format string, args ...any) error {
		return &BadDraftError{Which: which, Err: fmt.Errorf(format, args...)}
	}
	p := v.Policy
	switch {
	case p == nil:
		return nil, bad("a policy is needed")
	case p.Spec.MatchConstraints == nil:
		// The API requires them; without them the policy matches nothing.
		return nil, bad("the policy has no matchConstraints")
	}
	c := &compiled{Policy: p}
	var err error
	if c.policy, err = newCriteria(*p.Spec.MatchConstraints); err != nil {
		return nil, bad("matchConstraints: %v", err)
	}
	seen := map[string]bool{}
	for _, b := range v.Bindings {
		if b == nil {
			return nil, bad("a binding is nil")
		}
		badB := func(format string, args ...any) error {
			return &BadDraftError{Which: which, What: fmt.Sprintf("binding %q", b.Name), Err: fmt.Errorf(format, args...)}
		}
		switch {
		case seen[b.Name]:
			return nil, badB("two bindings are named %q", b.Name)
		case b.Spec.PolicyName != p.Name:
			return nil, badB("the binding %q binds policy %q, not %q", b.Name, b.Spec.PolicyName, p.Name)
		case len(b.Spec.ValidationActions) == 0:
			return nil, badB("the binding has no validationActions")
		}
		seen[b.Name] = true
		for _, a := range b.Spec.ValidationActions {
			if a != admissionregistrationv1.Deny && a != admissionregistrationv1.Warn && a != admissionregistrationv1.Audit {
				return nil, badB("unknown validationAction %q", a)
			}
		}
		cb := compiledBinding{ValidatingAdmissionPolicyBinding: b, criteria: criteria{all: true}}
		if b.Spec.MatchResources != nil {
			if cb.criteria, err = newCriteria(*b.Spec.MatchResources); err != nil {
				return nil, badB("the binding's matchResources: %v", err)
			}
		}
		if ref := b.Spec.ParamRef; ref != nil && ref.Selector != nil {
			if _, err := metav1.LabelSelectorAsSelector(ref.Selector); err != nil {
				return nil, badB("paramRef.selector: %v", err)
			}
		}
		c.bindings = append(c.bindings, cb)
	}
	slices.SortFunc(c.bindings, func(x, y compiledBinding) int { return strings.Compare(x.Name, y.Name) })
	if pk := p.Spec.ParamKind; pk != nil {
		if c.params, err = kinds.resolve(pk); err != nil {
			return nil, bad("paramKind %s %s: %v", pk.APIVersion, pk.Kind, err)
		}
	}
	c.cel = celmatch.CompilePolicy(p)
	if err := c.cel.Err(); err != nil {
		return nil, bad("%v", err)
	}
	return c, nil
}

// criteria is a MatchResources with its selectors parsed once: the
// matching package's MatchCriteria (matching.go), which the API server's
// accessors implement for policies and bindings.
type criteria struct {
	all       bool // a binding without matchResources: every request the policy matches
	mr        admissionregistrationv1.MatchResources
	ns, objec labels.Selector
}

func newCriteria(mr admissionregistrationv1.MatchResources) (criteria, error) {
	c := criteria{mr: mr, ns: labels.Everything(), objec: labels.Everything()}
	var err error
	if mr.NamespaceSelector != nil {
		if c.ns, err = metav1.LabelSelectorAsSelector(mr.NamespaceSelector); err != nil {
			return c, fmt.Errorf("namespaceSelector: %w", err)
		}
	}
	if mr.ObjectSelector != nil {
		if c.objec, err = metav1.LabelSelectorAsSelector(mr.ObjectSelector); err != nil {
			return c, fmt.Errorf("objectSelector: %w", err)
		}
	}
	return c, nil
}

func (c criteria) GetParsedNamespaceSelector() (labels.Selector, error) { return c.ns, nil }
func (c criteria) GetParsedObjectSelector() (labels.Selector, error)    { return c.objec, nil }
func (c criteria) GetMatchResources() admissionregistrationv1.MatchResources {
	return c.mr
}
