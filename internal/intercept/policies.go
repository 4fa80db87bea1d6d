package intercept

import (
	"context"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// PolicySource lists cached objects of a registered kind (kube.Cache.List).
type PolicySource interface {
	List(id kube.KindID) ([]runtime.Object, error)
}

// ParamLookup reads a binding's param object as the signed-in user. Only
// ConfigMaps are read; other paramKinds are reported unresolved.
type ParamLookup interface {
	// ConfigMap returns the ConfigMap as an unstructured object; found is
	// false when it does not exist.
	ConfigMap(ctx context.Context, namespace, name string) (obj map[string]any, found bool, err error)
}

// PolicyAnswer is one ValidatingAdmissionPolicy with one of its bindings
// and what they would do with the request.
type PolicyAnswer struct {
	Policy, Binding string
	// Applies: the policy's matchConstraints and the binding's
	// matchResources both match, so the API server evaluates the policy.
	Applies bool
	Reasons []string
	// Actions are the binding's validationActions (Deny, Warn, Audit).
	Actions       []string
	FailurePolicy string
	// Params says which param object was used, or why none was ("params
	// not resolved: …"); "" when the policy takes none.
	Params string
	// Outcome is nil where the policy does not apply or could not be
	// evaluated (see ConfigError).
	Outcome *celmatch.PolicyOutcome
	// ConfigError is a failure the API server reports as "failed to
	// configure binding" (a missing param with parameterNotFoundAction Deny);
	// ConfigDenies when failurePolicy Fail makes it deny.
	ConfigError  string
	ConfigDenies bool
	// Denies: the request is rejected by this binding (a Deny action on a
	// failed validation, or an error under failurePolicy Fail).
	Denies bool
	// Warns: a failed validation comes back as a warning (Warn action).
	Warns bool
	// Unresolved: the answer depends on something clusterdesk could not
	// read (params), so it may differ from the API server's.
	Unresolved bool
	// Unknown: an `authorizer` check of the policy could not be asked
	// (UnknownWhy says why), so its outcome stands on a check answered "no
	// opinion" and may be wrong.
	Unknown    bool
	UnknownWhy string
}

// policies evaluates every ValidatingAdmissionPolicy binding for req, as the
// ValidatingAdmissionPolicy plugin's dispatcher does (Dispatch in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go).
func (a Asker) policies(ctx context.Context, req admission.Request, equivalents []admission.GVR, objs Objects, authz *reviewAuthorizer) ([]PolicyAnswer, []string) {
	if a.Policies == nil {
		return nil, nil
	}
	if k, ok := a.Cache.Kind(kube.AdmissionPolicies); !ok || a.MayList == nil || !a.MayList(k) {
		return nil, []string{"Your Kubernetes identity may not list ValidatingAdmissionPolicies (or clusterdesk does not show them): policies are left out."}
	}
	if k, ok := a.Cache.Kind(kube.AdmissionPolicyBindings); !ok || !a.MayList(k) {
		return nil, []string{"Your Kubernetes identity may not list ValidatingAdmissionPolicyBindings: policies are left out."}
	}
	pols, err := a.Policies.List(kube.AdmissionPolicies)
	if err != nil {
		return nil, []string{"ValidatingAdmissionPolicies are left out: " + err.Error()}
	}
	bnds, err := a.Policies.List(kube.AdmissionPolicyBindings)
	if err != nil {
		return nil, []string{"ValidatingAdmissionPolicyBindings are left out: " + err.Error()}
	}
	byPolicy := map[string][]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for _, o := range bnds {
		if b, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding); ok {
			byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
		}
	}
	var ns *corev1.Namespace
	if req.Namespace != "" && req.Resource.Resource != "namespaces" {
		ns = &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: req.Namespace, Labels: req.NamespaceLabels}}
	}
	var out []PolicyAnswer
	for _, o := range pols {
		p, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if !ok {
			continue
		}
		bs := byPolicy[p.Name]
		sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
		for _, b := range bs {
			out = append(out, a.policy(ctx, p, b, req, equivalents, objs, ns, authz))
		}
	}
	return out, nil
}

// policy answers for one policy and binding.
func (a Asker) policy(ctx context.Context, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding,
	req admission.Request, equivalents []admission.GVR, objs Objects, ns *corev1.Namespace, authz *reviewAuthorizer) PolicyAnswer {
	ans := PolicyAnswer{Policy: p.Name, Binding: b.Name, FailurePolicy: string(admissionregistrationv1.Fail)}
	if p.Spec.FailurePolicy != nil {
		ans.FailurePolicy = string(*p.Spec.FailurePolicy)
	}
	for _, act := range b.Spec.ValidationActions {
		ans.Actions = append(ans.Actions, string(act))
	}
	// A policy without matchConstraints matches nothing (the API requires them).
	if p.Spec.MatchConstraints == nil {
		ans.Reasons = []string{"The policy has no matchConstraints: it matches nothing."}
		return ans
	}
	ok, matched, why := admission.MatchResources("Policy", p.Spec.MatchConstraints, req, equivalents)
	ans.Reasons = why
	if !ok {
		return ans
	}
	bok, _, bwhy := admission.MatchResources("Binding", b.Spec.MatchResources, req, equivalents)
	ans.Reasons = append(ans.Reasons, bwhy...)
	if !bok {
		return ans
	}
	ans.Applies = true
	fail := ans.FailurePolicy != string(admissionregistrationv1.Ignore)
	params, evaluate := a.params(ctx, p, b, req, &ans)
	if ans.ConfigError != "" {
		ans.ConfigDenies = fail
		ans.Denies = fail
		return ans
	}
	if !evaluate {
		return ans
	}
	in := celmatch.PolicyRequest{Request: celmatch.Request{Operation: req.Operation,
		Resource:    schema.GroupVersionResource{Group: matched.Group, Version: matched.Version, Resource: matched.Resource},
		Subresource: req.Subresource, Namespace: req.Namespace, Object: objs.Object, OldObject: objs.OldObject,
		User: objs.User, DryRun: objs.DryRun}, Params: params, Namespace: ns}
	before := authz.unknownAnswers()
	outcome := celmatch.EvaluatePolicy(ctx, p, in, authz)
	ans.Unknown, ans.UnknownWhy = authz.unknownSince(before)
	if ans.Unknown {
		return ans // neither denies nor warns on a guess
	}
	ans.Outcome = &outcome
	denied := outcome.Error != "" && outcome.ErrorDenies
	failed := false
	for _, v := range outcome.Validations {
		if v.Denies {
			failed = true
		}
	}
	// An auditAnnotation error under failurePolicy Fail is a denial that
	// the validationActions do not change (dispatcher.go appends it to the
	// denied decisions directly).
	for _, an := range outcome.AuditAnnotations {
		if an.Denies {
			ans.Denies = true
		}
	}
	// Dispatch: a denying decision counts once per validationAction.
	for _, act := range b.Spec.ValidationActions {
		switch act {
		case admissionregistrationv1.Deny:
			ans.Denies = ans.Denies || failed || denied
		case admissionregistrationv1.Warn:
			ans.Warns = ans.Warns || failed || denied
		}
	}
	return ans
}

// params resolves the binding's paramRef as generic.CollectParams does
// (k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go):
// the param's namespace is the paramRef's, else the request's; a missing
// param is a configuration error with parameterNotFoundAction Deny and
// skips the binding with Allow. It reports whether to evaluate, with the
// param object (nil: none).
func (a Asker) params(ctx context.Context, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, req admission.Request, ans *PolicyAnswer) (map[string]any, bool) {
	pk, ref := p.Spec.ParamKind, b.Spec.ParamRef
	switch {
	case pk == nil:
		return nil, true
	case ref == nil:
		ans.ConfigError = "failed to configure binding: paramKind is set on the policy but the binding has no paramRef"
		return nil, false
	}
	unresolved := func(why string) (map[string]any, bool) {
		ans.Params, ans.Unresolved = "params not resolved: "+why, true
		return nil, false
	}
	if pk.APIVersion != "v1" || pk.Kind != "ConfigMap" {
		return unresolved("clusterdesk reads only ConfigMap params, and this policy's paramKind is " + pk.APIVersion + " " + pk.Kind + ".")
	}
	if ref.Name == "" {
		return unresolved("the paramRef selects params by label (" + metav1.FormatLabelSelector(ref.Selector) + "); clusterdesk reads params by name only.")
	}
	if a.Params == nil {
		return unresolved("clusterdesk cannot read ConfigMaps here.")
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = req.Namespace
	}
	if namespace == "" {
		ans.ConfigError = "failed to configure binding: cannot use a namespaced paramRef in a cluster-scoped request without paramRef.namespace"
		return nil, false
	}
	obj, found, err := a.Params.ConfigMap(ctx, namespace, ref.Name)
	switch {
	case err != nil:
		return unresolved("could not read ConfigMap " + namespace + "/" + ref.Name + ": " + err.Error())
	case !found && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.AllowAction:
		ans.Params = "ConfigMap " + namespace + "/" + ref.Name + " does not exist; parameterNotFoundAction Allow: the binding is skipped."
		return nil, false
	case !found:
		ans.Params = "ConfigMap " + namespace + "/" + ref.Name + " does not exist."
		ans.ConfigError = "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
		return nil, false
	}
	ans.Params = "params: ConfigMap " + namespace + "/" + ref.Name + "."
	return obj, true
}

// DeniedMessage is the API server's message for the first denying binding
// (Dispatch's "ValidatingAdmissionPolicy '…' with binding '…' denied
// request: …"); "" when no binding denies.
func DeniedMessage(answers []PolicyAnswer) string {
	for _, ans := range answers {
		if !ans.Denies {
			continue
		}
		msg := ans.ConfigError
		if ans.Outcome != nil {
			msg = firstDenial(*ans.Outcome)
		}
		return "ValidatingAdmissionPolicy '" + ans.Policy + "' with binding '" + ans.Binding + "' denied request: " + msg
	}
	return ""
}

func firstDenial(o celmatch.PolicyOutcome) string {
	if o.Error != "" {
		return o.Error
	}
	for _, v := range o.Validations {
		if v.Denies {
			return v.Message
		}
	}
	for _, a := range o.AuditAnnotations {
		if a.Denies {
			return a.Error
		}
	}
	return ""
}

// Warnings are the warnings the API server would return for failed
// validations of bindings with the Warn action.
func Warnings(answers []PolicyAnswer) []string {
	var out []string
	for _, ans := range answers {
		if !ans.Warns || ans.Outcome == nil {
			continue
		}
		for _, v := range ans.Outcome.Validations {
			if v.Denies {
				out = append(out, "Validation failed for ValidatingAdmissionPolicy '"+ans.Policy+"' with binding '"+ans.Binding+"': "+v.Message)
			}
		}
	}
	return out
}
