// Package intercept answers "which webhooks would intercept this request?"
// from the cached webhook configurations, with what the cluster says about the
// request: the namespace's labels and the resource's equivalent versions,
// read as the signed-in user. It knows nothing of HTTP.
package intercept

import (
	"context"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Cache is the shared informer cache of webhook configurations.
type Cache interface {
	Kind(id kube.KindID) (kube.Kind, bool)
	Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error)
	MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error)
}

// Lookup reads what the cache does not hold, as the signed-in user.
type Lookup interface {
	Namespace(ctx context.Context, name string) (labels map[string]string, found bool, err error)
	ResourceLists(ctx context.Context, resource string) ([]*metav1.APIResourceList, error)
}

// Asker is the use case.
type Asker struct {
	Cache Cache
	// Lookup may be nil: the labels typed are used and matchPolicy
	// Equivalent is judged on the version asked only.
	Lookup Lookup
	// MayList reports whether the signed-in user may list a kind; the
	// configurations of a kind they may not list are left out, and said so.
	MayList func(kube.Kind) bool
	// Timeout bounds the lookups of one question: a slow API server makes the
	// answer say what it could not check, never hang. Zero: no bound.
	Timeout time.Duration
	// Reviewer answers the `authorizer` checks of matchConditions; nil
	// marks them unknown.
	Reviewer Reviewer
	// CELBudget bounds the time all matchConditions of one question take;
	// zero: DefaultCELBudget.
	CELBudget time.Duration
	// Policies lists the cached ValidatingAdmissionPolicies and bindings;
	// nil leaves policies out.
	Policies PolicySource
	// Params reads the ConfigMaps bindings take params from; nil reports
	// them unresolved.
	Params ParamLookup
}

// Answer is which webhooks would be called, in the order the API server calls
// them, and notes on what was read from the cluster (or could not be).
type Answer struct {
	Verdicts []admission.Verdict
	// Conditions holds, per verdict, the evaluation of the webhook's
	// matchConditions; nil where the rules or selectors already rule it out
	// or it has none.
	Conditions []*Conditions
	// Policies are the ValidatingAdmissionPolicy bindings, each with what it
	// would do with the request.
	Policies []PolicyAnswer
	Notes    []string
}

// Ask answers for req. The request's namespace labels are the namespace's own
// when it exists and the user may read it, else the ones req carries. The
// validating configurations are the caller's to authorize (the route's access
// check); the mutating ones are included only if the user may list them.
func (a Asker) Ask(ctx context.Context, req admission.Request) (Answer, error) {
	return a.AskWith(ctx, req, Objects{})
}

// AskWith is Ask with the objects and user the matchConditions see: every
// webhook the rules and selectors let through has its matchConditions
// evaluated as the API server would.
func (a Asker) AskWith(ctx context.Context, req admission.Request, objs Objects) (Answer, error) {
	configs, err := a.Cache.Webhooks()
	if err != nil {
		return Answer{}, err
	}
	var ans Answer
	if a.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.Timeout)
		defer cancel()
	}
	equivalents := []admission.GVR{req.Resource}
	if a.Lookup != nil {
		if req.Namespace != "" && req.Resource.Resource != "namespaces" {
			ans.Notes = append(ans.Notes, a.namespaceLabels(ctx, &req))
		}
		var note string
		equivalents, note = a.equivalents(ctx, req)
		ans.Notes = append(ans.Notes, note)
	}
	all := make([]admission.Config, 0, len(configs))
	for _, cfg := range configs {
		all = append(all, admission.FromValidating(cfg))
	}
	mutating, note := a.mutating()
	all = append(all, mutating...)
	if note != "" {
		ans.Notes = append(ans.Notes, note)
	}
	ans.Verdicts = admission.Intercepts(all, req, equivalents)
	ans.Conditions = a.evaluateConditions(ctx, all, ans.Verdicts, req, objs)
	if req.Name == "" {
		if meta, ok := objectMeta(objs); ok {
			req.Name, _ = meta["name"].(string)
		}
	}
	policies, notes := a.policies(ctx, req, equivalents, objs, &reviewAuthorizer{reviewer: a.Reviewer, answers: map[checkKey]answer{}})
	ans.Policies = policies
	ans.Notes = append(ans.Notes, notes...)
	return ans, nil
}

// namespaceLabels puts the namespace's own labels on req when it exists, and
// says which labels are used.
func (a Asker) namespaceLabels(ctx context.Context, req *admission.Request) string {
	switch nsLabels, found, err := a.Lookup.Namespace(ctx, req.Namespace); {
	case err != nil:
		return "Could not read namespace " + req.Namespace + ", so the labels typed above are used: " + err.Error()
	case found:
		req.NamespaceLabels = nsLabels
		return "Namespace " + req.Namespace + " exists; its labels are used: " + orNone(labels.Set(nsLabels).String()) + "."
	default:
		return "Namespace " + req.Namespace + " does not exist; the labels typed above are used."
	}
}

// equivalents are the resources served as the same storage through other
// versions or groups (admission.Equivalents says how they are found), with a
// note; the resource as asked alone when discovery cannot say.
func (a Asker) equivalents(ctx context.Context, req admission.Request) ([]admission.GVR, string) {
	lists, err := a.Lookup.ResourceLists(ctx, req.Resource.Resource)
	switch {
	case err != nil:
		return []admission.GVR{req.Resource}, "Could not ask discovery for the resource's equivalents, so matchPolicy Equivalent is judged on this version only: " + err.Error()
	case !served(lists, req.Resource):
		return []admission.GVR{req.Resource}, "The API server does not serve " + req.Resource.Resource + " in " + orCore(req.Resource.Group) + "/" + req.Resource.Version + "; the rules are matched as typed."
	}
	equivalents := admission.Equivalents(lists, req.Resource, req.Subresource)
	names := make([]string, 0, len(equivalents))
	for _, e := range equivalents {
		names = append(names, e.String())
	}
	return equivalents, "Served as the same objects (equivalent for matchPolicy Equivalent): " + strings.Join(names, ", ") + "."
}

// mutating returns the cached MutatingWebhookConfigurations, or a note saying
// why they are left out (the user may not list them, or the cache cannot
// serve them).
func (a Asker) mutating() ([]admission.Config, string) {
	kind, ok := a.Cache.Kind(kube.MutatingWebhooks)
	if !ok {
		return nil, ""
	}
	if a.MayList == nil || !a.MayList(kind) {
		return nil, "Your Kubernetes identity may not list MutatingWebhookConfigurations: only validating webhooks are shown."
	}
	list, err := a.Cache.MutatingWebhooks()
	if err != nil {
		return nil, "MutatingWebhookConfigurations are left out: " + err.Error()
	}
	out := make([]admission.Config, 0, len(list))
	for _, m := range list {
		out = append(out, admission.FromMutating(m))
	}
	return out, ""
}

// served reports whether discovery lists r.
func served(lists []*metav1.APIResourceList, r admission.GVR) bool {
	gv := r.Version
	if r.Group != "" {
		gv = r.Group + "/" + r.Version
	}
	for _, l := range lists {
		if l == nil || l.GroupVersion != gv {
			continue
		}
		for _, res := range l.APIResources {
			if res.Name == r.Resource {
				return true
			}
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orCore(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

// objectMeta is the metadata of the object given, else of the old object.
func objectMeta(objs Objects) (map[string]any, bool) {
	for _, o := range []map[string]any{objs.Object, objs.OldObject} {
		if m, ok := o["metadata"].(map[string]any); ok {
			return m, true
		}
	}
	return nil, false
}
