package attention

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func member(name, signer, subject, requester string, age time.Duration) csrqueue.Member {
	return csrqueue.Member{Name: name, Signer: signer, Subject: subject, Requester: requester, Created: now.Add(-age)}
}

func TestPendingCountsPerSignerWithTheOldest(t *testing.T) {
	storms := csrqueue.GroupStorms([]csrqueue.Member{
		member("a", "example.com/old", "a", "alice", 3*time.Hour),
		member("b", "example.com/old", "b", "alice", time.Minute),
		member("c", "example.com/new", "c", "bob", 5*time.Minute),
	})
	it, ok := Pending(storms.Signers(), now)
	if !ok || it.Count != 3 || it.Oldest != 3*time.Hour || it.Severity != Warning {
		t.Fatalf("item %+v", it)
	}
	if it.Href != "/csrs?state=pending" {
		t.Errorf("href %q", it.Href)
	}
	// The signer waiting past PendingWarnAge comes first, linked to its filtered queue.
	first := it.Entries[0]
	if first.Name != "example.com/old" || first.Count != 2 || first.Age != 3*time.Hour || first.Severity != Warning ||
		first.Href != "/csrs?signer=example.com%2Fold&state=pending" {
		t.Errorf("first entry %+v", first)
	}
	if e := it.Entries[1]; e.Severity != Notice || e.Age != 5*time.Minute {
		t.Errorf("young signer %+v", e)
	}
	if _, ok := Pending(nil, now); ok {
		t.Error("no pending request, yet an item")
	}
}

func TestStormsLinkTheQueueFilteredToTheirMembers(t *testing.T) {
	storms := csrqueue.GroupStorms([]csrqueue.Member{
		member("s1", "kubernetes.io/kubelet-serving", "system:node:n1", "system:node:n1", 2*time.Hour),
		member("s2", "kubernetes.io/kubelet-serving", "system:node:n1", "system:node:n1", time.Hour),
		member("lone", "kubernetes.io/kubelet-serving", "system:node:n2", "system:node:n2", time.Hour),
	})
	it, ok := Storms(TopStorms(storms.All()), storms.Len(), now)
	if !ok || it.Count != 1 || it.Severity != Warning || len(it.Entries) != 1 {
		t.Fatalf("item %+v", it)
	}
	id := storms.Of("s1").ID
	if e := it.Entries[0]; e.Count != 2 || e.Age != 2*time.Hour || e.Href != "/csrs?group="+id+"&state=pending" {
		t.Errorf("entry %+v", e)
	}
}

func TestUnapprovedSignersAreThoseNobodyMayApproveInParticular(t *testing.T) {
	storms := csrqueue.GroupStorms([]csrqueue.Member{
		member("a", "example.com/orphan", "a", "alice", time.Hour),
		member("b", "example.com/admins", "b", "bob", 2*time.Hour),
		member("c", "kubernetes.io/kube-apiserver-client", "c", "carol", time.Hour),
	})
	masters := approvers.Holder{Subject: rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:masters"}, Broad: true}
	admin := approvers.Holder{Subject: rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "ops"}, Broad: true}
	team := approvers.Holder{Subject: rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "csr-team"}}
	answers := map[string]approvers.Answer{
		"example.com/orphan":                  {Approvers: []approvers.Holder{masters}},
		"example.com/admins":                  {Approvers: []approvers.Holder{masters, admin}},
		"kubernetes.io/kube-apiserver-client": {Approvers: []approvers.Holder{masters, admin, team}},
	}
	gap := func(signer string) (Severity, bool) { return GapOf(answers[signer]) }
	it, ok := Unapproved(storms.Signers(), gap, now)
	if !ok || it.Count != 2 || it.Severity != Danger || it.Oldest != 2*time.Hour || it.Href != "/csrs/-/approvers" {
		t.Fatalf("item %+v", it)
	}
	if e := it.Entries[0]; e.Name != "example.com/orphan" || e.Severity != Danger || e.Href != "/csrs/-/approvers?signer=example.com%2Forphan" {
		t.Errorf("orphan %+v", e)
	}
	if e := it.Entries[1]; e.Name != "example.com/admins" || e.Severity != Warning {
		t.Errorf("admins only %+v", e)
	}
	if _, ok := Unapproved(storms.Signers(), nil, now); ok {
		t.Error("who approves is not known, yet an item")
	}
}

func TestLevelsRejectingKeepTheInstance(t *testing.T) {
	ld := apfload.Load{Window: 10 * time.Second, Levels: map[string]apfload.LevelLoad{
		"workload-low": {RejectedPerSecond: 2.5}, "global-default": {},
	}}
	rej := RejectingOf(ld)
	if len(rej) != 1 || rej[0] != (Rejecting{Level: "workload-low", PerSecond: 2.5}) {
		t.Fatalf("rejecting %+v", rej)
	}
	// Read per instance: the rates are each instance's, named; an instance
	// that did not answer adds nothing (it is not an idle one either).
	quiet := &apfload.Load{Levels: map[string]apfload.LevelLoad{"workload-low": {}}}
	busy := &apfload.Load{Levels: map[string]apfload.LevelLoad{"workload-low": {RejectedPerSecond: 40}}}
	perInstance := apfload.Load{Levels: map[string]apfload.LevelLoad{"workload-low": {RejectedPerSecond: 40}},
		Instances: []apfload.InstanceLoad{{Name: "10.0.0.1:6443", Load: quiet}, {Name: "10.0.0.2:6443", Load: busy}, {Name: "10.0.0.3:6443"}}}
	if got := RejectingOf(perInstance); len(got) != 1 || got[0] != (Rejecting{Level: "workload-low", PerSecond: 40, Instance: "10.0.0.2:6443"}) {
		t.Fatalf("per instance: rejecting %+v", got)
	}
	rej = append(rej, Rejecting{Level: "workload-low", PerSecond: 1, Instance: "10.0.0.2:6443"})
	it, ok := Levels(rej)
	if !ok || it.Count != 1 || len(it.Entries) != 2 || it.Severity != Danger || it.Href != "/prioritylevels" {
		t.Fatalf("item %+v", it)
	}
	if e := it.Entries[1]; e.Instance != "10.0.0.2:6443" || e.Href != "/prioritylevels/workload-low" {
		t.Errorf("second instance %+v", e)
	}
}

func hook(name string, policy admissionregistrationv1.FailurePolicyType, timeout int32) admission.Hook {
	return admission.Hook{Name: name, FailurePolicy: policy, TimeoutSeconds: timeout}
}

func TestFailingWebhooksFailedOpenOrSlow(t *testing.T) {
	refs := map[apfload.WebhookKey][]HookRef{
		{Type: apfload.TypeValidating, Name: "open.example.com"}: {{Kind: kube.Webhooks, Config: "cfg-open", Hook: hook("open.example.com", admissionregistrationv1.Ignore, 10)}},
		{Type: apfload.TypeMutating, Name: "slow.example.com"}:   {{Kind: kube.MutatingWebhooks, Config: "cfg-slow", Hook: hook("slow.example.com", admissionregistrationv1.Fail, 2)}},
		{Type: apfload.TypeValidating, Name: "fine.example.com"}: {{Kind: kube.Webhooks, Config: "cfg-fine", Hook: hook("fine.example.com", admissionregistrationv1.Fail, 10)}},
	}
	ld := apfload.Load{Window: 10 * time.Second, Webhooks: map[apfload.WebhookKey]apfload.WebhookLoad{
		{Type: apfload.TypeValidating, Name: "open.example.com"}: {FailedOpen: 5, P99: math.NaN()},
		{Type: apfload.TypeMutating, Name: "slow.example.com"}:   {P99: 1.9},
		{Type: apfload.TypeValidating, Name: "fine.example.com"}: {P99: 0.01},
	}}
	items := Failing(ld, func(k apfload.WebhookKey) []HookRef { return refs[k] })
	if len(items) != 2 { // one per kind, the mutating kind first
		t.Fatalf("items %+v", items)
	}
	mutating, validating := items[0], items[1]
	if mutating.Count != 1 || mutating.Severity != Warning || !slices.Equal(mutating.Kinds, []kube.KindID{kube.MutatingWebhooks}) ||
		mutating.Href != "/mutatingwebhooks" {
		t.Errorf("mutating item %+v", mutating)
	}
	if validating.Count != 1 || validating.Severity != Danger || !slices.Equal(validating.Kinds, []kube.KindID{kube.Webhooks}) ||
		validating.Href != "/validatingwebhooks" {
		t.Errorf("validating item %+v", validating)
	}
	open, slow := validating.Entries[0], mutating.Entries[0]
	if open.Name != "cfg-open / open.example.com" || open.Rate != 0.5 || open.Href != "/validatingwebhooks/cfg-open" {
		t.Errorf("failed open %+v", open)
	}
	if slow.Severity != Warning || slow.Seconds != 1.9 || slow.Href != "/mutatingwebhooks/cfg-slow" {
		t.Errorf("slow %+v", slow)
	}
	// Who may list both kinds sees one item, linking each kind's list.
	all := Visible(items, func(kube.KindID) bool { return true })
	if len(all) != 1 || all[0].Count != 2 || all[0].Severity != Danger || all[0].Href != "" ||
		!slices.Equal(all[0].ByKind, []KindLink{{Kind: kube.MutatingWebhooks, Count: 1, Href: "/mutatingwebhooks"}, {Kind: kube.Webhooks, Count: 1, Href: "/validatingwebhooks"}}) {
		t.Errorf("visible to all %+v", all)
	}
}

func TestDangerLintsOnlyErrors(t *testing.T) {
	cfg := admission.Config{Name: "c", Hooks: []admission.Hook{hook("a", admissionregistrationv1.Fail, 10), hook("b", admissionregistrationv1.Fail, 10)}}
	lint := func(_ admission.Config, h admission.Hook) []admission.Finding {
		if h.Name == "a" {
			return []admission.Finding{{Severity: admission.Error, Title: "Fail policy reaches kube-system"}, {Severity: admission.Warning, Title: "Long timeout"}}
		}
		return []admission.Finding{{Severity: admission.Warning, Title: "Long timeout"}}
	}
	d, ok := DangerOf(kube.Webhooks, cfg, lint)
	if !ok || !slices.Equal(d.Notes, []string{"a: Fail policy reaches kube-system"}) {
		t.Fatalf("danger %+v", d)
	}
	items := Lints(map[string]Dangerous{configKey(kube.Webhooks, "c"): d})
	if len(items) != 1 || items[0].Count != 1 || items[0].Entries[0].Name != "c" || items[0].Href != "/validatingwebhooks?lint=danger" {
		t.Fatalf("items %+v", items)
	}
	if _, ok := DangerOf(kube.Webhooks, admission.Config{Hooks: cfg.Hooks[1:]}, lint); ok {
		t.Error("warnings only, yet danger")
	}
}

// TestDangerLintsOfBothKindsLinkEachFilteredList: with danger lints in both
// webhook kinds, who may list both sees one item linking each kind's
// lint=danger list (it linked the validating list only, so the mutating
// configurations were one click away from nowhere); who may list only one
// kind sees that kind's item alone.
func TestDangerLintsOfBothKindsLinkEachFilteredList(t *testing.T) {
	danger := map[string]Dangerous{
		configKey(kube.Webhooks, "v1"):         {Kind: kube.Webhooks, Notes: []string{"a: x"}},
		configKey(kube.Webhooks, "v2"):         {Kind: kube.Webhooks, Notes: []string{"a: x"}},
		configKey(kube.MutatingWebhooks, "m1"): {Kind: kube.MutatingWebhooks, Notes: []string{"b: y"}},
	}
	items := Lints(danger)
	all := Visible(items, func(kube.KindID) bool { return true })
	want := []KindLink{{Kind: kube.MutatingWebhooks, Count: 1, Href: "/mutatingwebhooks?lint=danger"},
		{Kind: kube.Webhooks, Count: 2, Href: "/validatingwebhooks?lint=danger"}}
	if len(all) != 1 || all[0].Count != 3 || all[0].Href != "" || !slices.Equal(all[0].ByKind, want) || len(all[0].Entries) != 3 {
		t.Fatalf("visible to all %+v", all)
	}
	onlyValidating := Visible(items, func(k kube.KindID) bool { return k == kube.Webhooks })
	if len(onlyValidating) != 1 || onlyValidating[0].Count != 2 || onlyValidating[0].Href != "/validatingwebhooks?lint=danger" ||
		onlyValidating[0].ByKind != nil {
		t.Fatalf("visible to a validating reader %+v", onlyValidating)
	}
}

func crdWith(name string, stored []string, served ...string) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, v := range served {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}})
	}
	c.Status.StoredVersions = stored
	return c
}

func TestDriftIsSeveralStoredVersionsOrOneNotServed(t *testing.T) {
	if _, ok := DriftOf(crdWith("clean.example.com", []string{"v1"}, "v1")); ok {
		t.Error("one stored version, served: drift")
	}
	several, ok := DriftOf(crdWith("two.example.com", []string{"v1beta1", "v1"}, "v1beta1", "v1"))
	if !ok || several.Severity != Notice {
		t.Errorf("several stored %+v", several)
	}
	gone, ok := DriftOf(crdWith("gone.example.com", []string{"v1beta1", "v1"}, "v1"))
	if !ok || gone.Severity != Warning || !slices.Contains(gone.Notes, "v1beta1 stored but not served") {
		t.Errorf("stored not served %+v", gone)
	}
	it, ok := CRDs(map[string]Drift{"two.example.com": several, "gone.example.com": gone})
	if !ok || it.Count != 2 || it.Severity != Warning || it.Entries[0].Name != "gone.example.com" ||
		it.Entries[0].Href != "/crds/gone.example.com" || it.Href != "/crds?lint=drift" {
		t.Fatalf("item %+v", it)
	}
}

func TestWatchesLostAfterASyncOnly(t *testing.T) {
	synced := now.Add(-10 * time.Minute)
	statuses := []kube.KindStatus{
		{Kind: kube.Kind{ID: kube.CRDs, Title: "CustomResourceDefinitions"}, State: kube.StateError, SyncedAt: synced, Err: errors.New("watch closed")},
		{Kind: kube.Kind{ID: kube.CSIDrivers, Title: "CSIDrivers"}, State: kube.StateError}, // never synced: not a lost watch
		{Kind: kube.Kind{ID: kube.CSRs, Title: "CertificateSigningRequests"}, State: kube.StateError, SyncedAt: synced},
	}
	items := Watches(statuses, now)
	if len(items) != 2 || items[0].Entries[0].Age != 10*time.Minute || items[0].Entries[0].Href != "/crds" {
		t.Fatalf("items %+v", items)
	}
	// Each user sees the lost watches of the kinds they may list, as one item.
	vis := Visible(items, func(k kube.KindID) bool { return k == kube.CRDs })
	if len(vis) != 1 || vis[0].Count != 1 {
		t.Fatalf("visible to a CRD reader %+v", vis)
	}
	all := Visible(items, func(kube.KindID) bool { return true })
	if len(all) != 1 || all[0].Count != 2 || len(all[0].Entries) != 2 || all[0].Href != "" {
		t.Fatalf("visible to all %+v", all)
	}
}

func TestVisibleKeepsWhatTheUserMayListMostSevereFirst(t *testing.T) {
	items := []Item{
		{Concern: PendingCSRs, Severity: Notice, Kinds: []kube.KindID{kube.CSRs}},
		{Concern: CRDDrift, Severity: Warning, Kinds: []kube.KindID{kube.CRDs}},
		{Concern: WebhooksFailing, Severity: Danger, Kinds: []kube.KindID{kube.Webhooks, kube.MutatingWebhooks}},
	}
	var got []Concern
	for _, it := range Visible(items, func(k kube.KindID) bool { return k != kube.MutatingWebhooks }) {
		got = append(got, it.Concern)
	}
	if !slices.Equal(got, []Concern{CRDDrift, PendingCSRs}) {
		t.Errorf("visible %v", got)
	}
}

// fakeCRDs is a cache of CRDs that reports changes, as kube.Cache does.
type fakeCRDs struct {
	items    map[string]*apiextensionsv1.CustomResourceDefinition
	listened func(kube.KindID, string)
	lists    int
}

func (f *fakeCRDs) OnChange(fn func(kube.KindID, string)) { f.listened = fn }
func (f *fakeCRDs) names() ([]string, error) {
	f.lists++
	var out []string
	for n := range f.items {
		out = append(out, n)
	}
	return out, nil
}
func (f *fakeCRDs) judge(name string) (Drift, bool, error) {
	c, ok := f.items[name]
	if !ok {
		return Drift{}, false, apierrors.NewNotFound(schema.GroupResource{Resource: "crds"}, name)
	}
	d, keep := DriftOf(c)
	return d, keep, nil
}

func TestKeptJudgesOnlyWhatChanged(t *testing.T) {
	f := &fakeCRDs{items: map[string]*apiextensionsv1.CustomResourceDefinition{}}
	for _, n := range []string{"a.example.com", "b.example.com", "c.example.com"} {
		f.items[n] = crdWith(n, []string{"v1"}, "v1")
	}
	f.items["d.example.com"] = crdWith("d.example.com", []string{"v1beta1", "v1"}, "v1")
	k := newKept(f, kube.CRDs, f.names, f.judge)
	held := func() []string {
		var out []string
		if err := k.Each(func(n string, _ Drift) { out = append(out, n) }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	if got := held(); !slices.Equal(got, []string{"d.example.com"}) || k.judged != 4 || f.lists != 1 {
		t.Fatalf("first read: held %v, judged %d, lists %d", got, k.judged, f.lists)
	}
	if held(); k.judged != 4 {
		t.Errorf("an unchanged cluster judged %d names again", k.judged-4)
	}
	// a drifts, d is migrated, another kind's change is ignored.
	f.items["a.example.com"] = crdWith("a.example.com", []string{"v1", "v2"}, "v1", "v2")
	delete(f.items, "d.example.com")
	f.listened(kube.CRDs, "a.example.com")
	f.listened(kube.CRDs, "d.example.com")
	f.listened(kube.CSRs, "b.example.com")
	if got := held(); !slices.Equal(got, []string{"a.example.com"}) || k.judged != 6 || f.lists != 1 {
		t.Errorf("after two changes: held %v, judged %d, lists %d", got, k.judged, f.lists)
	}
	// A lost or recovered watch ("") lists again.
	f.listened(kube.CRDs, "")
	if held(); f.lists != 2 {
		t.Errorf("lists %d after a status change", f.lists)
	}
}
