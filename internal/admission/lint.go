package admission

import (
	"fmt"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// Severity ranks a finding.
type Severity int

// Severities, least first.
const (
	Info Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "info"
}

// Finding is one lint result: a stable code (for tests and data-testid), a
// severity, a short title and a one-line explanation.
type Finding struct {
	Code     string
	Severity Severity
	Title    string
	Message  string
}

// Lint codes.
const (
	CodeFailKubeSystem     = "fail-kube-system"
	CodeFailOwnNamespace   = "fail-own-namespace"
	CodeWildcardResources  = "wildcard-resources"
	CodeSensitiveResources = "sensitive-resources"
	CodeExemptResources    = "exempt-resources"
	CodeTimeout            = "timeout"
	CodeSideEffects        = "side-effects"
	CodeCABundleEmpty      = "ca-bundle-empty"
	CodeCABundleInvalid    = "ca-bundle-invalid"
	CodeCAExpired          = "ca-expired"
	CodeCAExpiring         = "ca-expiring"
	CodeCANotYetValid      = "ca-not-yet-valid"
	CodeURLNotHTTPS        = "url-not-https"
	CodeNoTarget           = "no-target"
	CodeServiceMissing     = "service-missing"
	CodeNoReadyEndpoints   = "no-ready-endpoints"
	CodeBackendUnknown     = "backend-unknown"
)

// MaxQuietTimeoutSeconds is the longest timeout that is not flagged: the
// default, and a third of the API server's own 60 s request limit once several
// webhooks add up.
const MaxQuietTimeoutSeconds = 10

// sensitive are resources whose writes the cluster itself depends on: node
// heartbeats and leader election (leases, nodes), every workload (pods), and
// namespace lifecycle.
var sensitive = []GroupResource{
	{"", "pods"}, {"", "nodes"}, {"", "namespaces"}, {"coordination.k8s.io", "leases"},
}

// exempt are the resources the API server never sends to admission webhooks,
// so that a broken webhook can always be reconfigured.
var exempt = []GroupResource{
	{"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "validatingadmissionpolicies"},
	{"admissionregistration.k8s.io", "validatingadmissionpolicybindings"},
	{"admissionregistration.k8s.io", "mutatingadmissionpolicies"},
	{"admissionregistration.k8s.io", "mutatingadmissionpolicybindings"},
}

// Lint checks one webhook of a configuration at time now (for certificate
// expiry). The backing Service is judged by LintBackend, which needs lookups.
func Lint(cfg Config, h Hook, now time.Time) []Finding {
	var out []Finding
	out = append(out, lintFailure(h)...)
	out = append(out, lintRules(h)...)
	if h.TimeoutSeconds > MaxQuietTimeoutSeconds {
		out = append(out, Finding{CodeTimeout, Warning, "Long timeout",
			fmt.Sprintf("timeoutSeconds is %d: each matching request can wait that long for this webhook before it succeeds or fails.", h.TimeoutSeconds)})
	}
	out = append(out, lintSideEffects(h)...)
	out = append(out, LintClientConfig(h.ClientConfig, cfg.Annotations, now)...)
	return out
}

func lintFailure(h Hook) []Finding {
	if h.FailurePolicy != admissionregistrationv1.Fail || !h.mayMatchNamespaced() || len(h.Rules) == 0 {
		return nil
	}
	sev := Warning
	if h.coversControlPlaneGroups() {
		sev = Error
	}
	cel := ""
	if len(h.MatchConditions) > 0 {
		cel = " unless its matchConditions exclude them"
	}
	var out []Finding
	if h.reachesNamespace("kube-system") {
		out = append(out, Finding{CodeFailKubeSystem, sev, "Fail policy reaches kube-system",
			"failurePolicy is Fail and the namespaceSelector does not exclude kube-system: while this webhook is down, matching requests there are rejected" + cel + "."})
	}
	if s := h.ServiceRef(); s != nil && s.Namespace != "kube-system" && h.reachesNamespace(s.Namespace) {
		out = append(out, Finding{CodeFailOwnNamespace, sev, "Fail policy reaches its own namespace",
			"failurePolicy is Fail and the namespaceSelector does not exclude " + s.Namespace + ", where the webhook itself runs: if it goes down, matching requests that would bring it back are rejected" + cel + "."})
	}
	return out
}

func lintRules(h Hook) []Finding {
	var out []Finding
	if w := h.wildcardRules(); len(w) > 0 {
		var groups []string
		for _, r := range w {
			for _, g := range r.APIGroups {
				if g == "" {
					g = "core"
				}
				if !slices.Contains(groups, g) {
					groups = append(groups, g)
				}
			}
		}
		out = append(out, Finding{CodeWildcardResources, Warning, "Wildcard resources",
			"A rule matches every resource of " + strings.Join(groups, ", ") + ", including resources installed later."})
	}
	var hits []string
	sev := Warning
	for _, gr := range sensitive {
		for _, e := range h.covered(gr) {
			if e == gr.Resource || strings.HasPrefix(e, gr.Resource+"/") {
				hits = append(hits, e)
			} else {
				hits = append(hits, gr.Resource+" (via "+e+")")
			}
			if h.FailurePolicy == admissionregistrationv1.Fail && h.reachesSystem(gr) {
				sev = Error
			}
		}
	}
	if len(hits) > 0 {
		out = append(out, Finding{CodeSensitiveResources, sev, "Intercepts cluster-critical resources",
			"Rules cover " + strings.Join(hits, ", ") + ": the control plane and kubelets write these constantly, so a slow or failing webhook stalls the cluster."})
	}
	var ex []string
	for _, gr := range exempt {
		if c := h.covered(gr); len(c) > 0 && !slices.Contains(c, "*") && !slices.Contains(c, "*/*") {
			ex = append(ex, gr.Resource)
		}
	}
	if len(ex) > 0 {
		out = append(out, Finding{CodeExemptResources, Info, "Rule has no effect on webhook configurations",
			"Rules name " + strings.Join(ex, ", ") + ", which the API server never sends to admission webhooks (so a broken webhook can always be fixed)."})
	}
	return out
}

func lintSideEffects(h Hook) []Finding {
	if h.SideEffects == nil {
		return []Finding{{CodeSideEffects, Error, "sideEffects unset",
			"admissionregistration/v1 requires sideEffects; without None or NoneOnDryRun every dry-run request it matches is rejected."}}
	}
	switch *h.SideEffects {
	case admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.SideEffectClassNoneOnDryRun:
		return nil
	}
	return []Finding{{CodeSideEffects, Error, "Side effects on dry run",
		"sideEffects is " + string(*h.SideEffects) + ": every dry-run request it matches (kubectl --dry-run=server, clusterdesk previews) is rejected."}}
}

// LintClientConfig checks how the API server reaches a webhook (admission or
// CRD conversion): the URL scheme and the caBundle. annotations are the
// owning object's, to recognise a CA injector that fills an empty caBundle.
func LintClientConfig(cc admissionregistrationv1.WebhookClientConfig, annotations map[string]string, now time.Time) []Finding {
	var out []Finding
	switch {
	case cc.URL != nil:
		if !strings.HasPrefix(strings.ToLower(*cc.URL), "https://") {
			out = append(out, Finding{CodeURLNotHTTPS, Error, "URL is not https",
				"The API server only calls webhooks over https; " + *cc.URL + " cannot be reached."})
		}
	case cc.Service == nil:
		out = append(out, Finding{CodeNoTarget, Error, "No target", "clientConfig names neither a Service nor a URL."})
	}
	return append(out, LintCABundle(cc.CABundle, cc.Service != nil, annotations, now)...)
}

// reachesSystem reports whether h is called for the system's own objects of
// kind gr: nodes (which no namespace selector filters), or objects in
// kube-system and kube-node-lease, where leases and control-plane pods live.
func (h Hook) reachesSystem(gr GroupResource) bool {
	if gr.Resource == "nodes" {
		return selectorMatches(h.ObjectSelector, nil)
	}
	return h.reachesNamespace("kube-system") || h.reachesNamespace("kube-node-lease")
}
