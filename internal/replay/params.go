package replay

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ParamSource reads param objects as they are today (kube.Lookup, as the
// signed-in user, implements it; so does intercept.ParamLookup's contract).
type ParamSource interface {
	// ParamResource maps apiVersion and kind to a resource and its scope;
	// found is false when the API server serves no such kind.
	ParamResource(ctx context.Context, apiVersion, kind string) (gvr schema.GroupVersionResource, namespaced, found bool, err error)
	// Params returns the object named name, or those selector selects when
	// name is "".
	Params(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, selector labels.Selector) ([]map[string]any, error)
}

// paramKind is a policy's paramKind as the API server serves it.
type paramKind struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// paramKinds resolves paramKinds at compile time: an unknown one is a bad
// draft, not a per-request error.
type paramKinds struct {
	ctx context.Context
	src ParamSource
}

func (k paramKinds) resolve(pk *admissionregistrationv1.ParamKind) (*paramKind, error) {
	if k.src == nil {
		return nil, errors.New("params cannot be read here")
	}
	gvr, namespaced, found, err := k.src.ParamResource(k.ctx, pk.APIVersion, pk.Kind)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, errors.New("the API server serves no such kind")
	}
	return &paramKind{gvr: gvr, namespaced: namespaced}, nil
}

// paramsMemo keeps each binding's params per namespace for the replay: they
// are today's, so one read per namespace serves every request in it.
type paramsMemo struct {
	src ParamSource
	got map[paramsKey]paramsAnswer
}

type paramsKey struct {
	binding   *compiledBinding // each binding has its own paramRef
	namespace string
}

type paramsAnswer struct {
	params []map[string]any
	err    error
}

// collect returns the params a request in namespace is evaluated with
// under binding b of c, as
// CollectParams in
// k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go
// finds them: none asked (a nil param) without a paramKind or a paramRef; the
// paramRef's namespace, else the request's, for a namespaced paramKind; by
// name or selector; none found is an error under parameterNotFoundAction
// Deny and no evaluation under Allow.
func (m *paramsMemo) collect(ctx context.Context, c *compiled, b *compiledBinding, namespace string) ([]map[string]any, error) {
	ref := b.Spec.ParamRef
	if c.params == nil || ref == nil {
		return []map[string]any{nil}, nil
	}
	pns := ""
	if c.params.namespaced {
		pns = ref.Namespace
		if pns == "" {
			pns = namespace
		}
		if pns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	key := paramsKey{binding: b, namespace: pns}
	if a, ok := m.got[key]; ok {
		return a.params, a.err
	}
	a := paramsAnswer{}
	switch {
	case ref.Name != "" && ref.Selector != nil:
		a.err = fmt.Errorf("paramRef.name and paramRef.selector are mutually exclusive")
	case ref.Name != "":
		a.params, a.err = m.src.Params(ctx, c.params.gvr, pns, ref.Name, nil)
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector) // parsed at compile time
		if err != nil {
			a.err = err
			break
		}
		a.params, a.err = m.src.Params(ctx, c.params.gvr, pns, "", sel)
	default:
		a.err = errors.New("one of name or selector must be provided")
	}
	if a.err == nil && len(a.params) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		a.err = errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	if ctx.Err() == nil { // a cancelled read is no answer to keep
		m.got[key] = a
	}
	return a.params, a.err
}
