package decide

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// call is one DecideCSR the fake writer received.
type call struct {
	name            string
	uid             types.UID
	approve         bool
	reason, message string
}

// fakeWriter answers DecideCSR with a per-name error and records the calls.
type fakeWriter struct {
	mu    sync.Mutex
	calls []call
	errs  map[string]error
}

func (w *fakeWriter) DecideCSR(_ context.Context, name string, uid types.UID, approve bool, reason, message string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, call{name, uid, approve, reason, message})
	if err := w.errs[name]; err != nil {
		return nil, err
	}
	return []string{"warning about " + name}, nil
}

// recorder keeps the audited decisions in order.
type recorder struct{ got []Decision }

func (r *recorder) Decided(_ context.Context, d Decision) { r.got = append(r.got, d) }

func ref(name string) Ref {
	return Ref{Name: name, UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", len(name)))}
}

var csrResource = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}

func TestCondition(t *testing.T) {
	for _, tc := range []struct {
		approve                 bool
		text                    string
		verb, reason, wantInMsg string
	}{
		{true, "", "Approved", "ClusterdeskApproved", "Approved by ann via clusterdesk"},
		{false, "", "Denied", "ClusterdeskDenied", "Denied by ann via clusterdesk"},
		{true, "checked the node", "Approved", "ClusterdeskApproved", "Approved by ann via clusterdesk: checked the node"},
	} {
		verb, reason, msg := Condition("ann", tc.approve, tc.text)
		if verb != tc.verb || reason != tc.reason || msg != tc.wantInMsg {
			t.Errorf("Condition(ann, %v, %q) = %q, %q, %q; want %q, %q, %q", tc.approve, tc.text, verb, reason, msg, tc.verb, tc.reason, tc.wantInMsg)
		}
	}
}

// TestOne: one decision is written on the UID shown with the user's condition,
// audited once, and a replaced request comes back as such.
func TestOne(t *testing.T) {
	replaced := &kube.ReplacedError{Name: "b", Seen: ref("b").UID, Current: &certificatesv1.CertificateSigningRequest{}, Err: apierrors.NewConflict(csrResource, "b", errors.New("uid"))}
	for _, tc := range []struct {
		name     string
		ref      Ref
		approve  bool
		err      error
		replaced bool
	}{
		{"approved", ref("a"), true, nil, false},
		{"denied", ref("a"), false, nil, false},
		{"replaced since viewed", ref("b"), true, replaced, true},
		{"forbidden", ref("c"), true, apierrors.NewForbidden(csrResource, "c", errors.New("no")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWriter{errs: map[string]error{"b": replaced, "c": tc.err}}
			rec := &recorder{}
			d := Decisions{Writer: w, Audit: rec}.One(context.Background(), "ann", tc.ref, tc.approve, "why")
			if len(w.calls) != 1 {
				t.Fatalf("%d writes; want exactly one (the writer owns the retries)", len(w.calls))
			}
			c := w.calls[0]
			_, reason, msg := Condition("ann", tc.approve, "why")
			if c.name != tc.ref.Name || c.uid != tc.ref.UID || c.approve != tc.approve || c.reason != reason || c.message != msg {
				t.Errorf("wrote %+v; want %s on UID %s, approve %v, %q, %q", c, tc.ref.Name, tc.ref.UID, tc.approve, reason, msg)
			}
			if !errors.Is(d.Err, tc.err) {
				t.Errorf("Err = %v; want %v", d.Err, tc.err)
			}
			if r, ok := d.Replaced(); ok != tc.replaced || (ok && r != replaced) {
				t.Errorf("Replaced() = %v, %v; want %v", r, ok, tc.replaced)
			}
			if tc.err == nil && !slices.Equal(d.Warnings, []string{"warning about " + tc.ref.Name}) {
				t.Errorf("warnings %q were not passed on", d.Warnings)
			}
			if len(rec.got) != 1 || rec.got[0].Ref != tc.ref || rec.got[0].Text != "why" || !errors.Is(rec.got[0].Err, tc.err) {
				t.Errorf("audited %+v; want this one decision", rec.got)
			}
		})
	}
}

// TestBatch: every request is written on its own UID, one failure does not
// stop the others, outcomes and audit records keep the order chosen, and
// more than MaxBatch is refused before any write.
func TestBatch(t *testing.T) {
	many := make([]Ref, MaxBatch+1)
	for i := range many {
		many[i] = Ref{Name: fmt.Sprintf("r%d", i), UID: "u"}
	}
	denied := apierrors.NewConflict(csrResource, "b", errors.New("it is already denied"))
	for _, tc := range []struct {
		name    string
		refs    []Ref
		errs    map[string]error
		invalid string
		failed  []string
	}{
		{"all succeed", []Ref{ref("a"), ref("bb"), ref("ccc")}, nil, "", nil},
		{"one already decided", []Ref{ref("a"), ref("b"), ref("ccc")}, map[string]error{"b": denied}, "", []string{"b"}},
		{"all fail", []Ref{ref("b")}, map[string]error{"b": denied}, "", []string{"b"}},
		{"nothing", nil, nil, "", nil},
		{"one over the limit", many, nil, "decide at most 500", nil},
		{"exactly the limit", many[:MaxBatch], nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWriter{errs: tc.errs}
			rec := &recorder{}
			out, err := Decisions{Writer: w, Audit: rec}.Batch(context.Background(), "ann", tc.refs, false, "")
			if tc.invalid != "" {
				var inv *InvalidError
				if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.invalid) || len(w.calls) != 0 || len(rec.got) != 0 {
					t.Fatalf("err = %v after %d writes; want an InvalidError saying %q and no write", err, len(w.calls), tc.invalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(w.calls) != len(tc.refs) || len(out) != len(tc.refs) || len(rec.got) != len(tc.refs) {
				t.Fatalf("%d writes, %d outcomes, %d audited; want %d of each", len(w.calls), len(out), len(rec.got), len(tc.refs))
			}
			var failed []string
			for i, d := range out {
				if d.Ref != tc.refs[i] || rec.got[i].Ref != tc.refs[i] || d.Approve {
					t.Fatalf("outcome %d is %+v (audited %+v); want a denial of %+v, in order", i, d.Ref, rec.got[i].Ref, tc.refs[i])
				}
				if d.Err != nil {
					failed = append(failed, d.Ref.Name)
				}
			}
			if !slices.Equal(failed, tc.failed) {
				t.Errorf("failed %v; want %v", failed, tc.failed)
			}
			for _, c := range w.calls {
				if want := refByName(tc.refs, c.name).UID; c.uid != want {
					t.Errorf("%s written with UID %s; want %s", c.name, c.uid, want)
				}
			}
		})
	}
}

func refByName(refs []Ref, name string) Ref {
	for _, r := range refs {
		if r.Name == name {
			return r
		}
	}
	return Ref{}
}

// TestGroup: a storm group step approves at most one request and denies the
// others; a confirmation that contradicts itself writes nothing.
func TestGroup(t *testing.T) {
	many := make([]Ref, MaxBatch)
	for i := range many {
		many[i] = Ref{Name: fmt.Sprintf("r%d", i), UID: "u"}
	}
	for _, tc := range []struct {
		name          string
		approve, deny []Ref
		invalid       string
		approved      []string
	}{
		{"approve newest, deny the rest", []Ref{ref("new")}, []Ref{ref("o1"), ref("o22")}, "", []string{"new"}},
		{"deny all", nil, []Ref{ref("o1"), ref("o22")}, "", nil},
		{"approve two", []Ref{ref("a"), ref("bb")}, nil, "at most one request", nil},
		{"nothing", nil, nil, "names no request", nil},
		{"approved and denied", []Ref{ref("a")}, []Ref{ref("a")}, "a is both approved and denied", nil},
		{"over the step", []Ref{ref("a")}, many, "501 requests in one step", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWriter{}
			rec := &recorder{}
			out, err := Decisions{Writer: w, Audit: rec}.Group(context.Background(), "ann", tc.approve, tc.deny, "storm")
			if tc.invalid != "" {
				var inv *InvalidError
				if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.invalid) || len(w.calls) != 0 {
					t.Fatalf("err = %v after %d writes; want an InvalidError saying %q and no write", err, len(w.calls), tc.invalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var approved []string
			for _, d := range out {
				if d.Approve {
					approved = append(approved, d.Ref.Name)
				}
			}
			if !slices.Equal(approved, tc.approved) || len(out) != len(tc.approve)+len(tc.deny) || len(rec.got) != len(out) {
				t.Errorf("approved %v of %d outcomes (%d audited); want %v of %d", approved, len(out), len(rec.got), tc.approved, len(tc.approve)+len(tc.deny))
			}
		})
	}
}
