package replay

import (
	"context"
	"errors"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Options are one replay's inputs.
type Options struct {
	Writes ledger.WriteStore
	Window ledger.WriteQuery
	Draft  Version
	// Deployed is the version the cluster runs; nil when there is none (a
	// new policy or binding): it then matches nothing.
	Deployed *Version
	// Namespaces are today's namespaces (their labels meet the selectors).
	Namespaces []*corev1.Namespace
	// Params reads param objects; nil when neither version takes any.
	Params ParamSource
	// Progress, when set, is called every ProgressEvery writes and once at
	// the end (from the replay's goroutine).
	Progress func(Progress)
	// OnRequest, when set, gets every replayed request with both verdicts
	// (the agreement with the API server's annotations reads it). w is
	// valid during the call only.
	OnRequest func(w *ledger.Write, draft, deployed Verdict)
	// MaxChanges bounds Summary.Changes (DefaultMaxChanges when 0).
	MaxChanges int
	// MayList, when set, says whether the person the replay is for may
	// list a resource (group, resource: RBAC's names); the writes of any
	// other resource are left out before they are evaluated: they count
	// nowhere but in Scanned, so a replay shows nobody requests, users or
	// counts of resources their RBAC hides from them.
	MayList func(group, resource string) bool
}

// ProgressEvery is how many writes pass between Progress calls.
const ProgressEvery = 1000

// DefaultMaxChanges is how many changed requests a Summary lists; the
// groups count them all.
const DefaultMaxChanges = 1000

// Progress is how far a replay is.
type Progress struct {
	Scanned int64
	// Total is how many writes the window held when the replay began:
	// Scanned of Total is how far through it is (writes pruned meanwhile
	// end it short of Total).
	Total int64
	// At is the time of the last write scanned: with the window it tells
	// how far through the replay is.
	At   time.Time
	Done bool
}

// Why a recorded write is not replayed.
const (
	// SkipNotAdmitted: refused before admission (authentication or
	// authorization): no admission plugin saw it.
	SkipNotAdmitted = "refused before admission"
	// SkipNoObject: the object admission saw was not recorded (a refused
	// patch, whose request was the patch; an object over the size bound).
	SkipNoObject = "object not recorded"
	// SkipUnreadable: the recorded object is not a JSON object.
	SkipUnreadable = "object unreadable"
	// SkipInvalid: refused by the object's own validation (invalidBefore).
	SkipInvalid = "refused as invalid before the policies"
)

// The changes between the deployed version and the draft.
const (
	NewlyDenied    = "newly denied"
	NoLongerDenied = "no longer denied"
	NewlyWarned    = "newly warned"
)

// Summary is a replay's outcome.
type Summary struct {
	Counts
	Draft, Deployed Tally
	// Changes counts each change over the window.
	NewlyDenied, NoLongerDenied, NewlyWarned int64
	// Groups are the changed requests grouped by user, namespace,
	// resource and operation, most changes first.
	Groups []Group
	// Changes lists the first MaxChanges changed requests, oldest first;
	// ChangesLeftOut counts the rest.
	Changes        []Change
	ChangesLeftOut int64
	Elapsed        time.Duration
}

// Tally counts one version's verdicts.
type Tally struct{ Matched, Denied, Warned, Audited int64 }

func (t *Tally) add(v Verdict) {
	t.Matched += b2i(v.Matched)
	t.Denied += b2i(v.Denied)
	t.Warned += b2i(v.Warned)
	t.Audited += b2i(v.Audited)
}

// GroupKey is what a group of changed requests shares.
type GroupKey struct {
	User, Namespace, Resource, Operation string
}

// Group counts the changes of its requests.
type Group struct {
	GroupKey
	NewlyDenied, NoLongerDenied, NewlyWarned int64
}

func (g *Group) total() int64 { return g.NewlyDenied + g.NoLongerDenied + g.NewlyWarned }

// Change is one request whose verdict the draft changes.
type Change struct {
	Seq int64
	// WriteID is the recorded write's ID: a write of one of the console's
	// kinds has the ledger entry of the same ID (source apiserver).
	WriteID, AuditID string
	Time             time.Time
	GroupKey
	Name            string
	What            string // NewlyDenied, NoLongerDenied or NewlyWarned
	Draft, Deployed string // Verdict.State
	Message         string // the draft's message, or the deployed one's
	// Binding is the binding Message failed under ("" for the policy's own
	// configuration error): with several bindings, the one that decided.
	Binding string
}

// Run replays the writes of the window against the draft and the deployed
// version. A version that cannot be replayed is a *BadDraftError before any
// write is read; a cancelled ctx ends it with ctx's error.
func Run(ctx context.Context, o Options) (Summary, error) {
	start := time.Now()
	if o.Writes == nil {
		return Summary{}, errors.New("replay: no recorded writes (the ledger is off, or its audit webhook is not configured)")
	}
	kinds := paramKinds{ctx: ctx, src: o.Params}
	draft, err := compile(o.Draft, "draft", kinds)
	if err != nil {
		return Summary{}, err
	}
	var deployed *compiled
	if o.Deployed != nil {
		if deployed, err = compile(*o.Deployed, "deployed", kinds); err != nil {
			return Summary{}, err
		}
	}
	if o.MaxChanges <= 0 {
		o.MaxChanges = DefaultMaxChanges
	}
	r := &run{o: o, ctx: ctx, draft: draft, deployed: deployed,
		memo: &paramsMemo{src: o.Params, got: map[paramsKey]paramsAnswer{}}, groups: map[GroupKey]*Group{}}
	r.frame = newFrame(&r.sum.Counts, o.Progress, o.MayList, o.Namespaces)
	if err := r.frame.countWindow(ctx, o.Writes, o.Window); err != nil {
		return Summary{}, err
	}
	r.matcher = newMatcher(r.frame.ns)
	err = o.Writes.ScanWrites(ctx, o.Window, r.write)
	r.sum.Groups = groupsOf(r.groups, (*Group).total)
	r.sum.Elapsed = time.Since(start)
	r.frame.done(err)
	return r.sum, err
}

// run is one replay's state: counts, groups and the bounded changes.
type run struct {
	o               Options
	draft, deployed *compiled
	*frame
	matcher *matching.Matcher
	ctx     context.Context
	memo    *paramsMemo
	groups  map[GroupKey]*Group
	sum     Summary
}

func (r *run) write(w *ledger.Write) error {
	a, ok := r.admit(w)
	if !ok {
		return nil
	}
	req, va, nsObj := a.req, a.va, a.ns
	d := r.draft.evaluate(r.ctx, r.matcher, r.memo, va, req, nsObj)
	var dep Verdict
	if r.deployed != nil {
		dep = r.deployed.evaluate(r.ctx, r.matcher, r.memo, va, req, nsObj)
	}
	r.sum.Draft.add(d)
	r.sum.Deployed.add(dep)
	if r.o.OnRequest != nil {
		r.o.OnRequest(w, d, dep)
	}
	what := ""
	switch {
	case d.Denied && !dep.Denied:
		what, r.sum.NewlyDenied = NewlyDenied, r.sum.NewlyDenied+1
	case !d.Denied && dep.Denied:
		what, r.sum.NoLongerDenied = NoLongerDenied, r.sum.NoLongerDenied+1
	case d.Warned && !dep.Warned:
		what, r.sum.NewlyWarned = NewlyWarned, r.sum.NewlyWarned+1
	default:
		return nil
	}
	key := groupKey(w)
	g := r.groups[key]
	if g == nil {
		g = &Group{GroupKey: key}
		r.groups[key] = g
	}
	switch what {
	case NewlyDenied:
		g.NewlyDenied++
	case NoLongerDenied:
		g.NoLongerDenied++
	case NewlyWarned:
		g.NewlyWarned++
	}
	if len(r.sum.Changes) >= r.o.MaxChanges {
		r.sum.ChangesLeftOut++
		return nil
	}
	msg, binding := d.Message, d.Binding
	if msg == "" {
		msg, binding = dep.Message, dep.Binding
	}
	r.sum.Changes = append(r.sum.Changes, Change{Seq: w.Seq, WriteID: w.ID, AuditID: w.AuditID, Time: w.Time, GroupKey: key,
		Name: w.Name, What: what, Draft: d.State(), Deployed: dep.State(), Message: msg, Binding: binding})
	return nil
}

// skip says why w is not replayed, or "".
func skip(w *ledger.Write) string {
	// Authentication and authorization come before admission
	// (k8s.io/apiserver/pkg/server/config.go's handler chain): a 401, or a
	// 403 the authorizer gave, never reached a policy. A 403 from
	// admission has no "forbid" decision.
	if w.Code == 401 || (w.Code == 403 && w.Annotations["authorization.k8s.io/decision"] == "forbid") {
		return SkipNotAdmitted
	}
	if invalidBefore(w) {
		return SkipInvalid
	}
	if w.Object == nil && w.Operation != ledger.OpDelete {
		return SkipNoObject
	}
	return ""
}

// invalidBefore tells whether w was refused by the object's own validation
// (a field's, a schema's, a CRD's validation rules), which the API server
// runs before validating admission (k8s.io/apiserver's
// registry/generic/registry/store.go: BeforeCreate, then createValidation;
// BeforeUpdate, then updateValidation): a 422 whose message names neither a
// policy (policy/validating/dispatcher.go: "ValidatingAdmissionPolicy '...'")
// nor a webhook (webhook/errors/statuserror.go: "admission webhook \"...\"").
// A write recorded without its refusal is not known to be one.
func invalidBefore(w *ledger.Write) bool {
	return w.Code == 422 && w.Refusal != "" &&
		!strings.Contains(w.Refusal, "ValidatingAdmissionPolicy '") && !strings.Contains(w.Refusal, `admission webhook "`)
}

// request is w as celmatch and the matchers take it.
func request(w *ledger.Write) (celmatch.Request, bool) {
	req := celmatch.Request{
		Operation:   admissionregistrationv1.OperationType(w.Operation),
		Resource:    schema.GroupVersionResource{Group: w.APIGroup, Version: w.APIVersion, Resource: w.Resource},
		Subresource: w.Subresource, Namespace: w.Namespace, DryRun: w.DryRun,
		User: celmatch.User{Name: w.User, UID: w.UserUID, Groups: w.Groups},
	}
	// apimachinery's JSON keeps integers int64, as the API server's
	// objects have them (a typed object converted to unstructured, a
	// custom resource decoded): CEL's int arithmetic then works on them,
	// where encoding/json's float64 made `replicas + 1` an error.
	for _, o := range []struct {
		raw []byte
		to  *map[string]any
	}{{w.Object, &req.Object}, {w.OldObject, &req.OldObject}} {
		if o.raw == nil {
			continue
		}
		if err := utiljson.Unmarshal(o.raw, o.to); err != nil || *o.to == nil {
			return req, false
		}
	}
	return req, true
}

func resourceName(w *ledger.Write) string {
	s := w.Resource
	if w.APIGroup != "" {
		s += "." + w.APIGroup
	}
	if w.Subresource != "" {
		s += "/" + w.Subresource
	}
	return s
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
