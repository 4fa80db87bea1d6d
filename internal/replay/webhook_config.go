package replay

import (
	"cmp"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
)

// WebhookConfig is one version of a webhook configuration, validating or
// mutating (exactly one is set): the draft, or what the cluster runs.
type WebhookConfig struct {
	Validating *admissionregistrationv1.ValidatingWebhookConfiguration
	Mutating   *admissionregistrationv1.MutatingWebhookConfiguration
}

// Name is the configuration's name.
func (c WebhookConfig) Name() string {
	switch {
	case c.Validating != nil:
		return c.Validating.Name
	case c.Mutating != nil:
		return c.Mutating.Name
	}
	return ""
}

// hook is one webhook of a configuration, ready to decide many requests:
// what the API server's accessors give its predicates
// (k8s.io/apiserver/pkg/admission/plugin/webhook/accessors.go: the
// selectors parsed once, as GetParsedNamespaceSelector and
// GetParsedObjectSelector) and its matchConditions compiled once. The
// accessors themselves are not used: their package brings the webhook
// REST client and its tracing and proxy dependencies, none of which a
// replay calls.
type hook struct {
	name    string
	typ     string // "validate" or "admit", as the accessors' GetType
	rules   []admissionregistrationv1.RuleWithOperations
	ns, obj labels.Selector
	// conditions is nil when the webhook has no matchConditions.
	conditions matchconditions.Matcher
	// fail: failurePolicy Fail (the v1 default), so the request fails when
	// the webhook cannot be reached.
	fail bool
	// dryRunSafe: sideEffects None or NoneOnDryRun, so a dry run is sent
	// (callHook in .../webhook/validating/dispatcher.go and
	// .../mutating/dispatcher.go refuse a dry run otherwise).
	dryRunSafe bool
}

func (h *hook) GetParsedNamespaceSelector() (labels.Selector, error) { return h.ns, nil }
func (h *hook) GetParsedObjectSelector() (labels.Selector, error)    { return h.obj, nil }

// webhookFields are the fields of a validating or mutating webhook the
// replay reads.
type webhookFields struct {
	name          string
	rules         []admissionregistrationv1.RuleWithOperations
	failurePolicy *admissionregistrationv1.FailurePolicyType
	sideEffects   *admissionregistrationv1.SideEffectClass
	nsSel, objSel *metav1.LabelSelector
	conditions    []admissionregistrationv1.MatchCondition
}

// compileWebhooks checks and compiles each webhook of c; which names the
// version in errors. A selector that does not parse or a matchCondition
// that does not compile is a *BadDraftError: the API server would fail
// every request the webhook's rules match, and a replay of it would only
// show that.
func compileWebhooks(c WebhookConfig, which string) ([]hook, error) {
	bad := func(format string, args ...any) error {
		return &BadDraftError{Which: which, Err: fmt.Errorf(format, args...), What: "webhook configuration"}
	}
	var fields []webhookFields
	typ := "validate"
	switch {
	case c.Validating != nil && c.Mutating != nil:
		return nil, bad("a validating and a mutating configuration at once")
	case c.Validating != nil:
		for _, h := range c.Validating.Webhooks {
			fields = append(fields, webhookFields{h.Name, h.Rules, h.FailurePolicy, h.SideEffects, h.NamespaceSelector, h.ObjectSelector, h.MatchConditions})
		}
	case c.Mutating != nil:
		typ = "admit"
		for _, h := range c.Mutating.Webhooks {
			fields = append(fields, webhookFields{h.Name, h.Rules, h.FailurePolicy, h.SideEffects, h.NamespaceSelector, h.ObjectSelector, h.MatchConditions})
		}
	default:
		return nil, bad("no webhook configuration")
	}
	seen := map[string]bool{}
	hooks := make([]hook, 0, len(fields))
	for _, f := range fields {
		if f.name == "" || seen[f.name] {
			return nil, bad("each webhook needs a name of its own (%q)", f.name)
		}
		seen[f.name] = true
		h := hook{name: f.name, typ: typ, rules: f.rules, fail: f.failurePolicy == nil || *f.failurePolicy == admissionregistrationv1.Fail}
		var err error
		// The API server defaults a missing selector to {}, which selects
		// everything (SetDefaults_ValidatingWebhook in
		// k8s.io/kubernetes/pkg/apis/admissionregistration/v1/defaults.go);
		// LabelSelectorAsSelector, which the accessors parse with, would
		// make nil select nothing.
		if h.ns, err = metav1.LabelSelectorAsSelector(cmp.Or(f.nsSel, &metav1.LabelSelector{})); err != nil {
			return nil, bad("webhook %q: namespaceSelector: %v", f.name, err)
		}
		if h.obj, err = metav1.LabelSelectorAsSelector(cmp.Or(f.objSel, &metav1.LabelSelector{})); err != nil {
			return nil, bad("webhook %q: objectSelector: %v", f.name, err)
		}
		if se := f.sideEffects; se != nil {
			h.dryRunSafe = *se == admissionregistrationv1.SideEffectClassNone || *se == admissionregistrationv1.SideEffectClassNoneOnDryRun
		}
		if len(f.conditions) > 0 {
			if h.conditions, err = compileConditions(f, typ); err != nil {
				return nil, bad("webhook %q: %v", f.name, err)
			}
		}
		hooks = append(hooks, h)
	}
	return hooks, nil
}

// compileConditions compiles a webhook's matchConditions as
// GetCompiledMatcher in k8s.io/apiserver/pkg/admission/plugin/webhook/accessors.go
// does (the dispatcher's compiler, params none, the authorizer declared,
// stored expressions), but keeps the compile errors, which the upstream
// matcher only reports per request.
func compileConditions(f webhookFields, typ string) (matchconditions.Matcher, error) {
	exprs := make([]celplugin.ExpressionAccessor, len(f.conditions))
	for i, c := range f.conditions {
		exprs[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
	}
	eval := celmatch.Compiler().CompileCondition(exprs, celplugin.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true},
		environment.StoredExpressions)
	if errs := eval.CompilationErrors(); len(errs) > 0 {
		return nil, fmt.Errorf("matchConditions: %w", errors.Join(errs...))
	}
	return matchconditions.NewMatcher(eval, f.failurePolicy, "webhook", typ, f.name), nil
}
