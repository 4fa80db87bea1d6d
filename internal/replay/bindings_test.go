package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// named is binding b named name.
func named(name string, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b.Name = name
	return b
}

// inNamespaces narrows a binding to the namespaces labelled env in values.
func inNamespaces(values ...string) func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
	return func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: values}}}}
	}
}

// verdicts replays v (against deployed) over writes and returns the
// draft's verdict of each request with the summary.
func verdicts(t *testing.T, v Version, deployed *Version, p ParamSource, writes ...ledger.Write) ([]Verdict, Summary) {
	t.Helper()
	var out []Verdict
	sum, err := Run(context.Background(), Options{Writes: newStore(t, writes), Draft: v, Deployed: deployed, Namespaces: todays, Params: p,
		OnRequest: func(_ *ledger.Write, d, _ Verdict) { out = append(out, d) }})
	if err != nil {
		t.Fatal(err)
	}
	return out, sum
}

// TestReplayEvaluatesEveryBinding: a policy bound twice, Deny in prod and
// Warn in prod and dev, as the API server evaluates it: a request both
// bindings match is denied and warned, one only the Warn binding matches
// is warned, one neither matches is not matched. The message is the
// denying binding's even when a warning binding sorts first (the API
// server's refusal names the first denied decision).
func TestReplayEvaluatesEveryBinding(t *testing.T) {
	p := policy("p", noForbidden, nil)
	warnBoth := named("a-warn", binding("p", warn, inNamespaces("prod", "dev")))
	denyProd := named("b-deny", binding("p", deny, inNamespaces("prod")))
	vs, sum := verdicts(t, Version{p, bs(denyProd, warnBoth)}, nil, nil,
		cm("alice", "prod", "both", ledger.OpCreate, 201, "forbidden"),
		cm("bob", "dev", "warn-only", ledger.OpCreate, 201, "forbidden"),
		cm("carol", "gone", "none", ledger.OpCreate, 201, "forbidden"),
		cm("alice", "prod", "fine", ledger.OpCreate, 201, "fine"))
	var got []string
	for _, v := range vs {
		got = append(got, fmt.Sprintf("%s[%s %s]", v.State(), v.Of("a-warn").State(), v.Of("b-deny").State()))
	}
	want := "denied[warned denied] warned[warned not matched] not matched[not matched not matched] admitted[admitted admitted]"
	if strings.Join(got, " ") != want {
		t.Errorf("verdicts\n %s\nwant\n %s", strings.Join(got, " "), want)
	}
	if d := vs[0]; !d.Denied || !d.Warned || d.Binding != "b-deny" || d.Message != "mode forbidden" || len(d.Bindings) != 2 {
		t.Errorf("the request both bindings match: %+v", d)
	}
	if vs[2].Bindings != nil {
		t.Errorf("a request no binding matches has binding verdicts %+v", vs[2].Bindings)
	}
	if sum.Draft != (Tally{Matched: 3, Denied: 1, Warned: 2}) || sum.NewlyDenied != 1 || sum.NewlyWarned != 1 {
		t.Errorf("tally %+v, newly denied %d, newly warned %d", sum.Draft, sum.NewlyDenied, sum.NewlyWarned)
	}
	// Each listed change names the binding that decided it.
	var changes []string
	for _, c := range sum.Changes {
		changes = append(changes, c.Name+":"+c.What+":"+c.Binding)
	}
	if got, want := strings.Join(changes, " "), "both:"+NewlyDenied+":b-deny warn-only:"+NewlyWarned+":a-warn"; got != want {
		t.Errorf("changes %s, want %s", got, want)
	}
}

// TestReplayComparesAllBindingsWithAllDeployed: the deployed policy denies
// in prod; the draft keeps that binding and adds a Warn binding
// everywhere. Nothing is newly denied or let through; the failing requests
// are newly warned, prod's still denied (the API server sends the
// warnings with its refusal), dev's not matched before.
func TestReplayComparesAllBindingsWithAllDeployed(t *testing.T) {
	p := policy("p", noForbidden, nil)
	denyProd := named("deny-prod", binding("p", deny, inNamespaces("prod")))
	warnAll := named("warn-all", binding("p", warn, nil))
	_, sum := verdicts(t, Version{p, bs(denyProd, warnAll)}, &Version{p, bs(denyProd)}, nil,
		cm("alice", "prod", "a", ledger.OpCreate, 201, "forbidden"),
		cm("bob", "dev", "b", ledger.OpCreate, 201, "forbidden"),
		cm("bob", "dev", "c", ledger.OpCreate, 201, "fine"))
	if sum.NewlyDenied != 0 || sum.NoLongerDenied != 0 || sum.NewlyWarned != 2 || len(sum.Changes) != 2 ||
		sum.Changes[0].Name != "a" || sum.Changes[0].Deployed != "denied" || sum.Changes[0].Draft != "denied" ||
		sum.Changes[1].Name != "b" || sum.Changes[1].Deployed != "not matched" || sum.Changes[1].Draft != "warned" {
		t.Errorf("summary %+v", sum)
	}
	if sum.Deployed != (Tally{Matched: 1, Denied: 1}) || sum.Draft != (Tally{Matched: 3, Denied: 1, Warned: 2}) {
		t.Errorf("tallies: deployed %+v, draft %+v", sum.Deployed, sum.Draft)
	}
}

// TestReplayParamsPerBinding: each binding's paramRef is its own (prod's
// bans "fine", dev's bans "forbidden"); a binding whose param is missing
// under Deny is a configuration error that denies without stopping the
// other bindings.
func TestReplayParamsPerBinding(t *testing.T) {
	p := policy("p", []admissionregistrationv1.Validation{{Expression: "object.data.mode != params.data.banned", Message: "banned"}},
		func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		})
	ref := func(name string, envs ...string) func(*admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		return func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			inNamespaces(envs...)(s)
			s.ParamRef = &admissionregistrationv1.ParamRef{Name: name, Namespace: "policy", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}
		}
	}
	banned := func(name, mode string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "policy"},
			"data": map[string]any{"banned": mode}}
	}
	src := params{"policy/prod-limits": banned("prod-limits", "fine"), "policy/dev-limits": banned("dev-limits", "forbidden")}
	prod := named("prod", binding("p", deny, ref("prod-limits", "prod")))
	dev := named("dev", binding("p", deny, ref("dev-limits", "dev")))
	writes := []ledger.Write{
		cm("alice", "prod", "a", ledger.OpCreate, 201, "fine"),
		cm("alice", "prod", "b", ledger.OpCreate, 201, "forbidden"),
		cm("bob", "dev", "c", ledger.OpCreate, 201, "forbidden"),
		cm("bob", "dev", "d", ledger.OpCreate, 201, "fine"),
	}
	vs, _ := verdicts(t, Version{p, bs(prod, dev)}, nil, src, writes...)
	var got []string
	for _, v := range vs {
		got = append(got, v.State()+":"+v.Binding)
	}
	if want := "denied:prod admitted: denied:dev admitted:"; strings.Join(got, " ") != want {
		t.Errorf("verdicts %q, want %q", strings.Join(got, " "), want)
	}

	broken := named("broken", binding("p", deny, ref("absent", "dev")))
	warnDev := named("warn-dev", binding("p", warn, ref("dev-limits", "dev")))
	vs, _ = verdicts(t, Version{p, bs(warnDev, broken)}, nil, src, writes[2])
	if v := vs[0]; !v.Denied || !v.Warned || v.Binding != "broken" || !strings.HasPrefix(v.Message, "failed to configure binding: ") ||
		v.Of("warn-dev").Message != "banned" {
		t.Errorf("a binding's missing param beside a working binding: %+v", v)
	}
}

// TestReplayBindingsAreCheckedEach: a binding of another policy, two
// bindings of one name, a binding without actions are refused before any
// write, naming the binding; a policy without bindings matches nothing.
func TestReplayBindingsAreCheckedEach(t *testing.T) {
	p := policy("p", noForbidden, nil)
	ok := named("ok", binding("p", deny, nil))
	for _, tc := range []struct {
		name, want string
		bindings   []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	}{
		{"a second binding of another policy", `binding "other" cannot be replayed: the binding "other" binds policy "q", not "p"`,
			bs(ok, named("other", binding("q", deny, nil)))},
		{"two bindings of one name", `two bindings are named "ok"`, bs(ok, named("ok", binding("p", warn, nil)))},
		{"a second binding without actions", `binding "none" cannot be replayed: the binding has no validationActions`,
			bs(ok, named("none", binding("p", nil, nil)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t, []ledger.Write{cm("alice", "prod", "a", ledger.OpCreate, 201, "forbidden")})
			_, err := Run(context.Background(), Options{Writes: st, Draft: Version{p, tc.bindings}, Namespaces: todays})
			var bad *BadDraftError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), tc.want) || st.scans != 0 {
				t.Errorf("error %v, %d scans; want %q before any scan", err, st.scans, tc.want)
			}
		})
	}
	vs, sum := verdicts(t, Version{Policy: p}, nil, nil, cm("alice", "prod", "a", ledger.OpCreate, 201, "forbidden"))
	if len(vs) != 1 || vs[0].State() != "not matched" || sum.Draft != (Tally{}) {
		t.Errorf("a policy without bindings: %+v, %+v", vs, sum.Draft)
	}
}
