package replay

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

var at0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// store is a real embedded ledger holding writes, and counts its scans.
type store struct {
	ledger.WriteStore
	scans int
}

func (s *store) ScanWrites(ctx context.Context, q ledger.WriteQuery, each func(*ledger.Write) error) error {
	s.scans++
	return s.WriteStore.ScanWrites(ctx, q, each)
}

func newStore(t testing.TB, writes []ledger.Write) *store {
	t.Helper()
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws := st.(ledger.WriteStore)
	for start := 0; start < len(writes); start += 400 {
		if _, err := ws.AppendWrites(context.Background(), writes[start:min(start+400, len(writes))]); err != nil {
			t.Fatal(err)
		}
	}
	return &store{WriteStore: ws}
}

var seq int

// cm is a recorded ConfigMap write by user in ns with data mode.
func cm(user, ns, name, op string, code int, mode string) ledger.Write {
	seq++
	verb := map[string]string{ledger.OpCreate: "create", ledger.OpUpdate: "patch", ledger.OpDelete: "delete"}[op]
	w := ledger.Write{ID: fmt.Sprint("w", seq), AuditID: fmt.Sprint("a", seq), Time: at0.Add(time.Duration(seq) * time.Second),
		User: user, Groups: []string{"system:authenticated"}, Verb: verb, Operation: op, APIVersion: "v1", Resource: "configmaps",
		Namespace: ns, Name: name, Code: code}
	if op != ledger.OpDelete {
		w.Object = fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"labels":{"app":"web"}},"data":{"mode":%q}}`, name, ns, mode)
	}
	return w
}

func policy(name string, validations []admissionregistrationv1.Validation, mod func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}}},
			Validations: validations}}
	if mod != nil {
		mod(&p.Spec)
	}
	return p
}

func binding(policy string, actions []admissionregistrationv1.ValidationAction, mod func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec)) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: policy + "-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions}}
	if mod != nil {
		mod(&b.Spec)
	}
	return b
}

var (
	deny        = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	warn        = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
	audit       = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
	noForbidden = []admissionregistrationv1.Validation{{Expression: "object.data.mode != 'forbidden'", Message: "mode forbidden"}}
	todays      = []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"env": "prod"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "dev", Labels: map[string]string{"env": "dev"}}},
	}
)

// params is a ParamSource of ConfigMaps in namespace "policy".
type params map[string]map[string]any

func (p params) ParamResource(_ context.Context, apiVersion, kind string) (schema.GroupVersionResource, bool, bool, error) {
	if apiVersion == "v1" && kind == "ConfigMap" {
		return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, true, true, nil
	}
	return schema.GroupVersionResource{}, false, false, nil
}

func (p params) Params(_ context.Context, _ schema.GroupVersionResource, namespace, name string, _ labels.Selector) ([]map[string]any, error) {
	if o, ok := p[namespace+"/"+name]; ok {
		return []map[string]any{o}, nil
	}
	return nil, nil
}

func TestReplayVerdictsAndChanges(t *testing.T) {
	writes := []ledger.Write{
		cm("alice", "prod", "a", ledger.OpCreate, 201, "forbidden"), // 0
		cm("bob", "prod", "b", ledger.OpCreate, 201, "fine"),        // 1
		cm("bob", "dev", "c", ledger.OpCreate, 201, "forbidden"),    // 2
		cm("alice", "prod", "a", ledger.OpUpdate, 200, "changed"),   // 3: an update, its before is write 0
		cm("carol", "gone", "d", ledger.OpCreate, 201, "forbidden"), // 4: a namespace deleted since
	}
	limits := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "limits", "namespace": "policy"},
		"data": map[string]any{"banned": "fine"}}
	withParams := func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	}
	paramRef := func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "policy", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
	}
	for _, tc := range []struct {
		name           string
		draft          Version
		deployed       *Version
		draftStates    []string // per write
		newlyDenied    int64
		noLongerDenied int64
		newlyWarned    int64
		firstGroup     GroupKey
	}{
		{name: "a new Deny policy", draft: Version{policy("p", noForbidden, nil), bs(binding("p", deny, nil))},
			draftStates: []string{"denied", "admitted", "denied", "admitted", "denied"}, newlyDenied: 3,
			firstGroup: GroupKey{User: "alice", Namespace: "prod", Resource: "configmaps", Operation: ledger.OpCreate}},
		{name: "namespaceSelector with today's labels", draft: Version{policy("p", noForbidden, nil), bs(binding("p", deny, func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
		}))}, draftStates: []string{"denied", "admitted", "not matched", "admitted", "not matched"}, newlyDenied: 1},
		{name: "matchConditions leave bob out", draft: Version{policy("p", noForbidden, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-bob", Expression: "request.userInfo.username != 'bob'"}}
		}), bs(binding("p", deny, nil))}, draftStates: []string{"denied", "admitted", "admitted", "admitted", "denied"}, newlyDenied: 2},
		{name: "oldObject: mode is immutable", draft: Version{policy("p", []admissionregistrationv1.Validation{{Expression: "oldObject == null || object.data.mode == oldObject.data.mode"}}, nil), bs(binding("p", deny, nil))},
			draftStates: []string{"admitted", "admitted", "admitted", "denied", "admitted"}, newlyDenied: 1,
			firstGroup: GroupKey{User: "alice", Namespace: "prod", Resource: "configmaps", Operation: ledger.OpUpdate}},
		{name: "params", draft: Version{policy("p", []admissionregistrationv1.Validation{{Expression: "object.data.mode != params.data.banned"}}, withParams), bs(binding("p", deny, paramRef))},
			draftStates: []string{"admitted", "denied", "admitted", "admitted", "admitted"}, newlyDenied: 1},
		{name: "Deny deployed, Warn drafted", draft: Version{policy("p", noForbidden, nil), bs(binding("p", warn, nil))},
			deployed:    &Version{policy("p", noForbidden, nil), bs(binding("p", deny, nil))},
			draftStates: []string{"warned", "admitted", "warned", "admitted", "warned"}, noLongerDenied: 3},
		{name: "Audit deployed, Warn drafted", draft: Version{policy("p", noForbidden, nil), bs(binding("p", warn, nil))},
			deployed:    &Version{policy("p", noForbidden, nil), bs(binding("p", audit, nil))},
			draftStates: []string{"warned", "admitted", "warned", "admitted", "warned"}, newlyWarned: 3},
		{name: "a missing param under Deny: a config error", draft: Version{policy("p", noForbidden, withParams), bs(binding("p", audit, func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef = &admissionregistrationv1.ParamRef{Name: "absent", Namespace: "policy", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
		}))}, draftStates: []string{"denied", "denied", "denied", "denied", "denied"}, newlyDenied: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t, writes)
			var states []string
			sum, err := Run(context.Background(), Options{Writes: st, Draft: tc.draft, Deployed: tc.deployed, Namespaces: todays,
				Params:    params{"policy/limits": limits},
				OnRequest: func(w *ledger.Write, d, _ Verdict) { states = append(states, d.State()) }})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(states, ",") != strings.Join(tc.draftStates, ",") {
				t.Errorf("draft verdicts %v, want %v", states, tc.draftStates)
			}
			if sum.NewlyDenied != tc.newlyDenied || sum.NoLongerDenied != tc.noLongerDenied || sum.NewlyWarned != tc.newlyWarned {
				t.Errorf("changes: newly denied %d, no longer %d, newly warned %d", sum.NewlyDenied, sum.NoLongerDenied, sum.NewlyWarned)
			}
			if sum.Scanned != 5 || sum.Replayed != 5 || sum.NamespaceGone != 1 || sum.OldUnknown != 0 {
				t.Errorf("summary %+v", sum)
			}
			if tc.firstGroup != (GroupKey{}) && (len(sum.Groups) == 0 || sum.Groups[0].GroupKey != tc.firstGroup) {
				t.Errorf("groups %+v, want %+v first", sum.Groups, tc.firstGroup)
			}
			if n := int64(len(sum.Changes)); n != tc.newlyDenied+tc.noLongerDenied+tc.newlyWarned {
				t.Errorf("%d changes listed", n)
			}
		})
	}
}

// TestReplaySkipsWhatAdmissionNeverSaw: a write refused by authorization
// never reached a policy; a refused patch's object is unknown.
func TestReplaySkipsWhatAdmissionNeverSaw(t *testing.T) {
	forbidden := cm("mallory", "prod", "x", ledger.OpCreate, 403, "forbidden")
	forbidden.Annotations = map[string]string{"authorization.k8s.io/decision": "forbid"}
	refusedPatch := cm("alice", "prod", "y", ledger.OpUpdate, 422, "")
	refusedPatch.Object = nil
	st := newStore(t, []ledger.Write{forbidden, refusedPatch, cm("alice", "prod", "z", ledger.OpUpdate, 200, "forbidden")})
	sum, err := Run(context.Background(), Options{Writes: st, Draft: Version{policy("p", noForbidden, nil), bs(binding("p", deny, nil))}, Namespaces: todays})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Skipped[SkipNotAdmitted] != 1 || sum.Skipped[SkipNoObject] != 1 || sum.Replayed != 1 || sum.OldUnknown != 1 || sum.NewlyDenied != 1 {
		t.Errorf("summary %+v", sum)
	}
}

// TestBadDraftsAreRefusedBeforeAnyWrite: each bad draft gets a clear error
// and the writes are never read.
func TestBadDraftsAreRefusedBeforeAnyWrite(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		v          Version
	}{
		{"CEL that does not compile", "undeclared reference", Version{policy("p", []admissionregistrationv1.Validation{{Expression: "object.data.mode != nosuchvar"}}, nil), bs(binding("p", deny, nil))}},
		{"a messageExpression of the wrong type", "messageExpression", Version{policy("p", []admissionregistrationv1.Validation{{Expression: "true", MessageExpression: "1 + 1"}}, nil), bs(binding("p", deny, nil))}},
		{"an unknown paramKind", "paramKind example.com/v1 Limits", Version{policy("p", noForbidden, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limits"}
		}), bs(binding("p", deny, nil))}},
		{"a selector that does not parse", "namespaceSelector", Version{policy("p", noForbidden, nil), bs(binding("p", deny, func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Sometimes"}}}}
		}))}},
		{"a binding of another policy", "binds policy", Version{policy("p", noForbidden, nil), bs(binding("q", deny, nil))}},
		{"no validationActions", "no validationActions", Version{policy("p", noForbidden, nil), bs(binding("p", nil, nil))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t, []ledger.Write{cm("alice", "prod", "a", ledger.OpCreate, 201, "x")})
			_, err := Run(context.Background(), Options{Writes: st, Draft: tc.v, Namespaces: todays, Params: params{}})
			var bad *BadDraftError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), tc.want) || bad.Which != "draft" {
				t.Errorf("error %v, want a BadDraftError saying %q", err, tc.want)
			}
			if st.scans != 0 {
				t.Errorf("the writes were read for a bad draft")
			}
		})
	}
}

// TestReplayIsCancellableAndReportsProgress.
func TestReplayIsCancellableAndReportsProgress(t *testing.T) {
	var writes []ledger.Write
	for i := range 2500 {
		writes = append(writes, cm("alice", "prod", fmt.Sprint("c", i), ledger.OpCreate, 201, "fine"))
	}
	st := newStore(t, writes)
	draft := Version{policy("p", noForbidden, nil), bs(binding("p", deny, nil))}
	var seen []string
	sum, err := Run(context.Background(), Options{Writes: st, Draft: draft, Namespaces: todays, Progress: func(p Progress) { seen = append(seen, fmt.Sprintf("%d/%d", p.Scanned, p.Total)) }})
	if err != nil || sum.Scanned != 2500 || fmt.Sprint(seen) != "[0/2500 1000/2500 2000/2500 2500/2500]" {
		t.Fatalf("progress %v, scanned %d, err %v", seen, sum.Scanned, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sum, err = Run(ctx, Options{Writes: st, Draft: draft, Namespaces: todays, Progress: func(p Progress) {
		if p.Scanned > 0 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || sum.Scanned != 1000 {
		t.Errorf("cancelled at the first progress: scanned %d, err %v", sum.Scanned, err)
	}
}

// TestReplayShowsOnlyWhatThePersonMayList: the writes of a resource the
// person may not list count nowhere: no change, group, tally or skip of
// theirs reaches the summary, and OnRequest never sees them.
func TestReplayShowsOnlyWhatThePersonMayList(t *testing.T) {
	secretish := cm("alice", "prod", "hidden", ledger.OpCreate, 201, "forbidden")
	secretish.Resource = "widgets"
	secretish.APIGroup = "example.com"
	secretish.Object = []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"hidden","namespace":"prod"},"data":{"mode":"forbidden"}}`)
	forbidden := cm("bob", "prod", "x", ledger.OpCreate, 403, "forbidden")
	forbidden.Resource, forbidden.APIGroup = "widgets", "example.com"
	forbidden.Annotations = map[string]string{"authorization.k8s.io/decision": "forbid"}
	st := newStore(t, []ledger.Write{secretish, forbidden, cm("carol", "prod", "seen", ledger.OpCreate, 201, "forbidden")})
	p := policy("p", []admissionregistrationv1.Validation{{Expression: "!has(object.data) || object.data.mode != 'forbidden'"}}, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints.ResourceRules[0].Rule = admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}
	})
	var seen []string
	sum, err := Run(context.Background(), Options{Writes: st, Draft: Version{p, bs(binding("p", deny, nil))}, Namespaces: todays,
		MayList:   func(group, resource string) bool { return group == "" && resource == "configmaps" },
		OnRequest: func(w *ledger.Write, _, _ Verdict) { seen = append(seen, w.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[seen]" || sum.Replayed != 1 || sum.NewlyDenied != 1 || len(sum.Changes) != 1 || len(sum.Groups) != 1 ||
		sum.Groups[0].User != "carol" || len(sum.Skipped) != 0 || sum.Draft.Matched != 1 {
		t.Errorf("a person who may list configmaps only sees %v; summary %+v", seen, sum)
	}
}

// TestReplayReadsIntegersAsTheAPIServerDoes: the API server hands CEL a
// recorded object's integers as int (a typed object's int fields; a custom
// resource decoded by apimachinery's JSON, which keeps integers int64), so
// integer arithmetic works on them; decoded as float64 they made `+` and
// `%` with an int an error, which a Fail policy turns into a denial the
// API server never made. A fraction stays a double.
func TestReplayReadsIntegersAsTheAPIServerDoes(t *testing.T) {
	w := cm("alice", "prod", "web", ledger.OpCreate, 201, "")
	w.APIGroup, w.Resource = "apps", "deployments"
	w.Object = []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod"},"spec":{"replicas":5,"ratio":0.75}}`)
	p := policy("p", []admissionregistrationv1.Validation{
		{Expression: "object.spec.replicas % 2 == 1", Message: "odd replicas"},
		{Expression: "object.spec.replicas + 1 <= 6", Message: "at most 5"},
		{Expression: "type(object.spec.replicas) == int && object.spec.ratio > 0.5", Message: "ratio"},
	}, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints.ResourceRules[0].Rule = admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}
	})
	var got []string
	_, err := Run(context.Background(), Options{Writes: newStore(t, []ledger.Write{w}), Draft: Version{p, bs(binding("p", deny, nil))}, Namespaces: todays,
		OnRequest: func(_ *ledger.Write, d, _ Verdict) { got = append(got, d.State()+" "+d.Message) }})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[admitted ]" {
		t.Errorf("verdicts %q, want admitted", got)
	}
}

// TestReplaySkipsWhatTheObjectsValidationRefused: a 422 that names no
// policy or webhook is the object's own validation (a schema's type, a
// required field), which the API server runs before validating admission:
// no policy saw it, so neither version's verdict on it is counted. A 422
// from a policy or a webhook, and a refusal recorded without its message,
// are replayed.
func TestReplaySkipsWhatTheObjectsValidationRefused(t *testing.T) {
	invalid := cm("alice", "prod", "typo", ledger.OpCreate, 422, "forbidden")
	invalid.Refusal = `Widget.example.com "typo" is invalid: spec.colour: Invalid value: "integer": spec.colour in body must be of type string: "integer"`
	byPolicy := cm("alice", "prod", "p", ledger.OpCreate, 422, "forbidden")
	byPolicy.Refusal = `configmaps "p" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: mode forbidden`
	byWebhook := cm("alice", "prod", "w", ledger.OpCreate, 422, "forbidden")
	byWebhook.Refusal = `admission webhook "v.example.com" denied the request: no`
	unknown := cm("alice", "prod", "u", ledger.OpCreate, 422, "forbidden") // recorded before refusals were kept
	st := newStore(t, []ledger.Write{invalid, byPolicy, byWebhook, unknown})
	var seen []string
	sum, err := Run(context.Background(), Options{Writes: st, Draft: Version{policy("p", noForbidden, nil), bs(binding("p", deny, nil))}, Namespaces: todays,
		OnRequest: func(w *ledger.Write, _, _ Verdict) { seen = append(seen, w.Name) }})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[p w u]" || sum.Skipped[SkipInvalid] != 1 || sum.NewlyDenied != 3 {
		t.Errorf("replayed %v, summary %+v", seen, sum)
	}
}

// bs is bindings as a Version holds them.
func bs(bindings ...*admissionregistrationv1.ValidatingAdmissionPolicyBinding) []*admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return bindings
}
