package intercept

import (
	"context"
	"sort"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// ParamLookup reads a binding's param objects as the signed-in user, of any
// paramKind (kube.Lookup: discovery maps the kind, a dynamic client reads).
type ParamLookup interface {
	// ParamResource maps apiVersion and kind to a resource and its scope;
	// found is false when the API server serves no such kind.
	ParamResource(ctx context.Context, apiVersion, kind string) (gvr schema.GroupVersionResource, namespaced, found bool, err error)
	// Params returns the object named name (none when it does not exist),
	// or those selector selects when name is "".
	Params(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, selector labels.Selector) ([]map[string]any, error)
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
	// Params says which param objects were used, or why none was ("params
	// not resolved: …"); "" when the policy takes none.
	Params string
	// ParamShown names the param object of the evaluation Outcome shows
	// (one evaluation per param object).
	ParamShown string
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
		User: objs.User, DryRun: objs.DryRun}, Namespace: ns}
	// The dispatcher evaluates the policy once per param object
	// (PolicyInvocation per param in generic/policy_dispatcher.go); the answer
	// shows the first evaluation that denies or warns, else the first.
	for i, param := range params {
		in.Params = param
		before := authz.unknownAnswers()
		outcome := celmatch.EvaluatePolicy(ctx, p, in, authz)
		unknown, why := authz.unknownSince(before)
		denies, warns := decision(b, outcome)
		if i == 0 || (!ans.Denies && !ans.Warns && (denies || warns)) {
			ans.Outcome = &outcome
			ans.ParamShown = paramName(param)
		}
		if unknown {
			// Neither denies nor warns on a guess.
			ans.Unknown, ans.UnknownWhy = true, why
			continue
		}
		ans.Denies, ans.Warns = ans.Denies || denies, ans.Warns || warns
	}
	if ans.Unknown {
		ans.Denies, ans.Warns = false, false
	}
	return ans
}

// decision is what one evaluation makes of the request under the binding's
// validationActions (Dispatch in .../policy/validating/dispatcher.go): a
// failed validation, or an error under failurePolicy Fail, counts once per
// action; an auditAnnotation error under Fail denies whatever the actions
// (dispatcher.go appends it to the denied decisions directly).
func decision(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, outcome celmatch.PolicyOutcome) (denies, warns bool) {
	failed := outcome.Error != "" && outcome.ErrorDenies
	for _, v := range outcome.Validations {
		if v.Denies {
			failed = true
		}
	}
	for _, an := range outcome.AuditAnnotations {
		if an.Denies {
			denies = true
		}
	}
	for _, act := range b.Spec.ValidationActions {
		switch act {
		case admissionregistrationv1.Deny:
			denies = denies || failed
		case admissionregistrationv1.Warn:
			warns = warns || failed
		}
	}
	return denies, warns
}

// paramName is "namespace/name" of a param object ("" for none).
func paramName(param map[string]any) string {
	meta, _ := param["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" {
		return ns + "/" + name
	}
	return name
}

// params resolves the binding's paramRef as generic.CollectParams does
// (k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go),
// reading the param objects as the signed-in user through ParamLookup: no
// paramRef evaluates with null params; a namespaced paramKind is read in
// paramRef.namespace, else the request's namespace, and a cluster-scoped
// request without paramRef.namespace is a configuration error; a
// cluster-scoped paramKind must not name a namespace; by name or by label
// selector; none found is a configuration error with
// parameterNotFoundAction Deny and skips the binding otherwise. It returns
// the param objects to evaluate with (a nil entry: `params` is null) and
// whether to evaluate.
func (a Asker) params(ctx context.Context, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, req admission.Request, ans *PolicyAnswer) ([]map[string]any, bool) {
	pk, ref := p.Spec.ParamKind, b.Spec.ParamRef
	switch {
	case pk == nil:
		return []map[string]any{nil}, true
	case ref == nil:
		ans.Params = "The binding has no paramRef: the policy is evaluated with params null."
		return []map[string]any{nil}, true
	}
	configError := func(msg string) ([]map[string]any, bool) {
		ans.ConfigError = "failed to configure binding: " + msg
		return nil, false
	}
	unresolved := func(why string) ([]map[string]any, bool) {
		ans.Params, ans.Unresolved = "params not resolved: "+why, true
		return nil, false
	}
	if a.Params == nil {
		return unresolved("clusterdesk cannot read params here.")
	}
	kind := pk.Kind + " (" + pk.APIVersion + ")"
	gvr, namespaced, found, err := a.Params.ParamResource(ctx, pk.APIVersion, pk.Kind)
	switch {
	case err != nil:
		return unresolved("could not ask discovery for paramKind " + kind + ": " + err.Error())
	case !found:
		// The API server has no informer for an unknown kind.
		return configError("paramKind kind `" + pk.String() + "` not known")
	}
	namespace := ""
	if namespaced {
		namespace = ref.Namespace
		if namespace == "" {
			namespace = req.Namespace
		}
		if namespace == "" {
			return configError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.Namespace != "" {
		return configError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	where := kind
	if namespace != "" {
		where += " in namespace " + namespace
	}
	var selector labels.Selector
	switch {
	case ref.Name != "" && ref.Selector != nil:
		return configError("paramRef.name and paramRef.selector are mutually exclusive")
	case ref.Name != "":
		where = kind + " " + qualified(namespace, ref.Name)
	case ref.Selector != nil:
		if selector, err = metav1.LabelSelectorAsSelector(ref.Selector); err != nil {
			return configError(err.Error())
		}
		where += " selected by " + orNone(selector.String())
	default:
		return configError("one of name or selector must be provided")
	}
	params, err := a.Params.Params(ctx, gvr, namespace, ref.Name, selector)
	switch {
	case err != nil:
		return unresolved("could not read " + where + ": " + err.Error())
	case len(params) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction:
		ans.Params = "No param: " + where + " does not exist."
		return configError("no params found for policy binding with `Deny` parameterNotFoundAction")
	case len(params) == 0:
		ans.Params = "No param: " + where + " does not exist; parameterNotFoundAction Allow: the binding is skipped."
		return nil, false
	case len(params) == 1:
		ans.Params = "params: " + where + "."
	default:
		ans.Params = "params: " + where + ": " + strconv.Itoa(len(params)) + " objects, the policy is evaluated once with each."
	}
	return params, true
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
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
