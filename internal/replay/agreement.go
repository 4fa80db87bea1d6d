package replay

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// FailureAnnotation is the audit annotation in which the API server lists
// the validations that failed under a binding with the Audit action
// (publishValidationFailureAnnotations in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go):
// a JSON list of validationFailure. It is written whether or not another action
// of the binding denied the request.
const FailureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

// validationFailure is the part of one entry of FailureAnnotation the
// comparison reads: ValidationFailureValue in the same file (that package
// is not imported: it links the API server's tracing and gRPC).
type validationFailure struct {
	Message string `json:"message"`
	Policy  string `json:"policy"`
	Binding string `json:"binding"`
}

// AgreementOptions are the inputs of Agree: the deployed policy and every
// deployed binding of it.
type AgreementOptions struct {
	Writes   ledger.WriteStore
	Policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// Until bounds the window (zero: now); its start is each binding's
	// DeployedSince.
	Until time.Time
	// Since, when later than a binding's DeployedSince, starts its window
	// (the recorded writes' retention is the store's).
	Since      time.Time
	Namespaces []*corev1.Namespace
	Params     ParamSource
	MayList    func(group, resource string) bool
	// MaxDisagreements bounds Agreement.Disagreements (DefaultMaxChanges
	// when 0); the counts count them all.
	MaxDisagreements int
}

// Agreement is how the replay of the deployed version agrees with the API
// server's own validation_failure annotations, request by request, for
// each binding with the Audit action (the only ones the API server
// annotates).
type Agreement struct {
	Bindings []BindingAgreement // the auditing bindings, by name
	// NotAuditing names the bindings without the Audit action: the API
	// server writes nothing to compare their verdicts with.
	NotAuditing []string
	// Compared and Agreed sum the bindings' (a request under two auditing
	// bindings is compared twice).
	Compared, Agreed int64
	Disagreements    []Disagreement
	// DisagreementsLeftOut counts those past MaxDisagreements.
	DisagreementsLeftOut int64
	// Unreadable counts the requests whose annotation was not the API
	// server's JSON: not compared.
	Unreadable int64
	Scanned    int64
	Elapsed    time.Duration
}

// BindingAgreement is one auditing binding's comparison.
type BindingAgreement struct {
	Binding string
	// Since is the start of its window: the deployed version's last change
	// (DeployedSince), or AgreementOptions.Since.
	Since            time.Time
	Compared, Agreed int64
	// AuditedByAPIServer and AuditedByReplay count the requests each
	// found failing a validation.
	AuditedByAPIServer, AuditedByReplay int64
	// Done: the whole window was compared (false when the replay was
	// stopped before it, by its context).
	Done bool
}

// Disagreement is one request on which the replay and the API server
// differ.
type Disagreement struct {
	Seq              int64
	WriteID, AuditID string
	Time             time.Time
	GroupKey
	Name    string
	Code    int
	Binding string
	// Replay is the replay's verdict (Verdict.State) and its message;
	// APIServer whether the API server's annotation names the binding, and
	// its message when it does.
	Replay, ReplayMessage string
	APIServer             bool
	APIServerMessage      string
}

// DeployedSince is when the deployed version of policy and binding took
// effect, as far as the objects tell: the latest of their creation and of
// their managed fields' changes (status, which the type checker writes, is
// not the version), one second later: the API server keeps those times to
// the second, rounded down, so a write in that second may precede the
// change. The API server applies a change once its informer has it, a
// moment later still: a write in that moment may disagree.
func DeployedSince(policy *admissionregistrationv1.ValidatingAdmissionPolicy, binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding) time.Time {
	var t time.Time
	for _, m := range []metav1.ObjectMeta{policy.ObjectMeta, binding.ObjectMeta} {
		if c := m.CreationTimestamp.Time; c.After(t) {
			t = c
		}
		for _, f := range m.ManagedFields {
			if f.Subresource == "" && f.Time != nil && f.Time.After(t) {
				t = f.Time.Time
			}
		}
	}
	if t.IsZero() {
		return t
	}
	return t.Add(time.Second).UTC()
}

// Audits tells whether a binding's validationActions include Audit: only
// then does the API server annotate its failed validations.
func Audits(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) bool {
	return slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Audit)
}

// Agree replays the deployed policy with its auditing bindings over the
// recorded writes since each binding's DeployedSince and compares, per
// request and binding, the binding's Audited with the API server's
// annotation of the same request, which names the binding of each failure
// (ValidationFailureValue.Binding). The writes are read once, the policy
// evaluated with all its auditing bindings as the API server evaluates it
// (Run's draft). The bindings without Audit are left out of the replay: in
// the API server's Dispatch no binding's decision stops or changes
// another's (every binding is evaluated, the refusal comes after the loop),
// so they cannot change an auditing binding's failures, and evaluating them
// would only cost. A version that cannot be replayed is a *BadDraftError
// (Which "deployed"); a cancelled ctx returns what was compared with ctx's
// error.
func Agree(ctx context.Context, o AgreementOptions) (Agreement, error) {
	start := time.Now()
	var a Agreement
	if o.MaxDisagreements <= 0 {
		o.MaxDisagreements = DefaultMaxChanges
	}
	var auditing []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, b := range o.Bindings {
		if b.Spec.PolicyName != o.Policy.Name {
			continue
		}
		if Audits(b) {
			auditing = append(auditing, b)
		} else {
			a.NotAuditing = append(a.NotAuditing, b.Name)
		}
	}
	slices.SortFunc(auditing, func(x, y *admissionregistrationv1.ValidatingAdmissionPolicyBinding) int {
		return strings.Compare(x.Name, y.Name)
	})
	slices.Sort(a.NotAuditing)
	var since time.Time
	for i, b := range auditing {
		s := DeployedSince(o.Policy, b)
		if o.Since.After(s) {
			s = o.Since
		}
		a.Bindings = append(a.Bindings, BindingAgreement{Binding: b.Name, Since: s})
		if i == 0 || s.Before(since) {
			since = s
		}
	}
	var err error
	if len(auditing) > 0 {
		err = a.replay(ctx, o, auditing, since)
	}
	a.Elapsed = time.Since(start)
	return a, err
}

// replay replays the policy with the auditing bindings in one read of the
// writes since the earliest binding's window, and compares each binding's
// verdict within its own window.
func (a *Agreement) replay(ctx context.Context, o AgreementOptions, auditing []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, since time.Time) error {
	ro := Options{Writes: o.Writes, Namespaces: o.Namespaces, Params: o.Params, MayList: o.MayList, MaxChanges: 1,
		Draft: Version{Policy: o.Policy, Bindings: auditing}, Window: ledger.WriteQuery{Since: since, Until: o.Until}}
	ro.OnRequest = func(w *ledger.Write, v, _ Verdict) {
		api, ok := apiServerAudited(w.Annotations, o.Policy.Name)
		if !ok {
			a.Unreadable++
			return
		}
		for i := range a.Bindings {
			b := &a.Bindings[i]
			a.compare(w, b, v.Of(b.Binding), api, o.MaxDisagreements)
		}
	}
	sum, err := Run(ctx, ro)
	a.Scanned += sum.Scanned
	if err != nil {
		return err
	}
	for i := range a.Bindings {
		a.Bindings[i].Done = true
	}
	return nil
}

// compare counts one request under one binding.
func (a *Agreement) compare(w *ledger.Write, b *BindingAgreement, v Verdict, api map[string]string, max int) {
	if w.Time.Before(b.Since) {
		return
	}
	msg, byAPI := api[b.Binding]
	b.Compared++
	a.Compared++
	b.AuditedByAPIServer += b2i(byAPI)
	b.AuditedByReplay += b2i(v.Audited)
	if byAPI == v.Audited {
		b.Agreed++
		a.Agreed++
		return
	}
	if len(a.Disagreements) >= max {
		a.DisagreementsLeftOut++
		return
	}
	a.Disagreements = append(a.Disagreements, Disagreement{Seq: w.Seq, WriteID: w.ID, AuditID: w.AuditID, Time: w.Time,
		GroupKey: GroupKey{User: w.User, Namespace: w.Namespace, Resource: resourceName(w), Operation: w.Operation},
		Name:     w.Name, Code: w.Code, Binding: b.Binding, Replay: v.State(), ReplayMessage: v.Message,
		APIServer: byAPI, APIServerMessage: msg})
}

// apiServerAudited reads the API server's FailureAnnotation: the bindings
// of policy it names, each with its first message. ok is false when the
// annotation is there but is not the API server's JSON.
func apiServerAudited(annotations map[string]string, policy string) (bindings map[string]string, ok bool) {
	raw, there := annotations[FailureAnnotation]
	if !there {
		return nil, true
	}
	var fs []validationFailure
	if err := json.Unmarshal([]byte(raw), &fs); err != nil {
		return nil, false
	}
	for _, f := range fs {
		if f.Policy != policy {
			continue
		}
		if bindings == nil {
			bindings = map[string]string{}
		}
		if _, seen := bindings[f.Binding]; !seen {
			bindings[f.Binding] = f.Message
		}
	}
	return bindings, true
}

// Percent is Agreed of Compared in percent; 0 when nothing was compared
// (say so rather than show it).
func (a Agreement) Percent() float64 {
	if a.Compared == 0 {
		return 0
	}
	return 100 * float64(a.Agreed) / float64(a.Compared)
}
