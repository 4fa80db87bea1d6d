package editing

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

var csiDrivers = kube.Kind{ID: kube.CSIDrivers, Title: "CSIDrivers", Singular: "CSIDriver", Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}

func driver(name string, attach bool) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"attachRequired": attach, "podInfoOnMount": false},
	}}
}

func textOf(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	s, err := edit.Text(o, false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUpdate runs the editor's update and server-side apply against an
// in-memory API server: which calls are made in which order, what is audited,
// where it stops.
func TestUpdate(t *testing.T) {
	type want struct {
		calls    []string
		audited  []string
		written  bool
		answer   bool
		ignored  []string
		conflict bool
		input    string // the *edit.InputError's title
		apiErr   func(error) bool
	}
	cases := []struct {
		name   string
		keep   []string
		change func(base, text string, rv string) Change
		// meanwhile changes the stored object after the form was opened.
		meanwhile bool
		want      want
	}{
		{name: "preview dry-runs once and stops",
			change: func(base, text, rv string) Change {
				return Change{Text: text, ResourceVersion: rv, BaseText: base, DryRun: true}
			},
			want: want{calls: []string{"get", "update (dry run)"}, audited: []string{"update (dry run)"}, answer: true}},
		{name: "apply dry-runs, writes and waits for the cache",
			change: func(base, text, rv string) Change {
				return Change{Text: text, ResourceVersion: rv, BaseText: base, Cached: true}
			},
			want: want{calls: []string{"get", "update (dry run)", "update"}, audited: []string{"update (dry run)", "update"}, written: true}},
		{name: "a stale version is a conflict with the current object",
			meanwhile: true,
			change: func(base, text, rv string) Change {
				return Change{Text: text, ResourceVersion: rv, BaseText: base}
			},
			want: want{calls: []string{"get", "update (dry run)", "get"}, audited: []string{"update (dry run)"}, conflict: true, apiErr: apierrors.IsConflict}},
		{name: "a field the server keeps stops after the dry run",
			keep: []string{"attachRequired"},
			change: func(base, text, rv string) Change {
				return Change{Text: text, ResourceVersion: rv, BaseText: base}
			},
			want: want{calls: []string{"get", "update (dry run)"}, audited: []string{"update (dry run)"}, answer: true, ignored: []string{"spec.attachRequired"}}},
		{name: "no starting version sends nothing",
			change: func(base, text, _ string) Change { return Change{Text: text, BaseText: base} },
			want:   want{input: "No starting version"}},
		{name: "another object's name sends nothing",
			change: func(base, text, rv string) Change {
				return Change{Text: strings.Replace(text, "name: usecase-edit-a", "name: other", 1), ResourceVersion: rv}
			},
			want: want{input: "Name differs from the page"}},
		{name: "server-side apply carries no version and audits apply",
			meanwhile: true,
			change: func(base, text, rv string) Change {
				return Change{Text: text, ResourceVersion: rv, BaseText: base, Apply: true}
			},
			want: want{calls: []string{"get", "apply (dry run)", "apply"}, audited: []string{"apply (dry run)", "apply"}, written: true}},
		{name: "force without confirmation sends nothing",
			change: func(base, text, rv string) Change {
				return Change{Text: text, ResourceVersion: rv, BaseText: base, Apply: true, Force: true}
			},
			want: want{input: "Force not confirmed"}},
		{name: "confirmed force audits apply-force",
			change: func(base, text, rv string) Change {
				return Change{Text: text, ResourceVersion: rv, BaseText: base, Apply: true, Force: true, ForceConfirmed: true}
			},
			want: want{calls: []string{"get", "apply (dry run)", "apply"}, audited: []string{"apply-force (dry run)", "apply-force"}, written: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := newFake(driver("usecase-edit-a", false))
			api.keep = tc.keep
			opened := api.objs["usecase-edit-a"].DeepCopy()
			base := textOf(t, opened)
			if tc.meanwhile {
				changed := opened.DeepCopy()
				_ = unstructured.SetNestedField(changed.Object, true, "spec", "podInfoOnMount")
				api.store(changed)
			}
			mine := strings.Replace(base, "attachRequired: false", "attachRequired: true", 1)
			audit := &audits{}
			s := &Service{API: api, Cache: api, Audit: audit}
			c := tc.change(base, mine, opened.GetResourceVersion())
			c.Kind, c.Name = csiDrivers, "usecase-edit-a"
			out, err := s.Update(context.Background(), c)

			var in *edit.InputError
			switch {
			case tc.want.input != "":
				if !errors.As(err, &in) || !strings.HasPrefix(in.Title, tc.want.input) {
					t.Fatalf("err = %v, want the input error %q", err, tc.want.input)
				}
				if len(api.calls) != 0 || len(audit.writes) != 0 {
					t.Errorf("calls %q, audited %q: nothing should be sent", api.calls, audit.verbs())
				}
				return
			case tc.want.apiErr != nil:
				if !tc.want.apiErr(err) {
					t.Fatalf("err = %v", err)
				}
			case err != nil:
				t.Fatal(err)
			}
			if !slices.Equal(api.calls, tc.want.calls) {
				t.Errorf("calls %q, want %q", api.calls, tc.want.calls)
			}
			if got := audit.verbs(); !slices.Equal(got, tc.want.audited) {
				t.Errorf("audited %q, want %q", got, tc.want.audited)
			}
			for _, w := range audit.writes {
				// The "before" is the API server's object, read before the write.
				if w.From == nil || w.Before == "" {
					t.Errorf("audit record %+v has no before from the server", w)
				}
			}
			if out.Written != tc.want.written || (out.Answer != nil) != tc.want.answer || (out.Conflict != nil) != tc.want.conflict {
				t.Errorf("written %v, answer %v, conflict %v", out.Written, out.Answer != nil, out.Conflict)
			}
			var fields []string
			for _, ig := range out.Ignored {
				fields = append(fields, ig.Field)
			}
			if !slices.Equal(fields, tc.want.ignored) {
				t.Errorf("ignored %q, want %q", fields, tc.want.ignored)
			}
			if tc.want.conflict && (out.Conflict.Err != nil || out.Conflict.Current.GetResourceVersion() != api.objs["usecase-edit-a"].GetResourceVersion()) {
				t.Errorf("conflict %+v does not hold the current object", out.Conflict)
			}
			if tc.want.written && (out.Name != "usecase-edit-a" || out.After != api.objs["usecase-edit-a"].GetResourceVersion()) {
				t.Errorf("written %s at %s, stored at %s", out.Name, out.After, api.objs["usecase-edit-a"].GetResourceVersion())
			}
		})
	}
}

// TestCreate: a preview creates nothing; a namespaced kind needs a namespace.
func TestCreate(t *testing.T) {
	text := textOf(t, driver("usecase-edit-new", true))
	cases := []struct {
		name       string
		change     Change
		calls      []string
		written    bool
		input      string
		namespaced bool
	}{
		{name: "preview", change: Change{Text: text, DryRun: true}, calls: []string{"create (dry run)"}},
		{name: "create", change: Change{Text: text, Cached: true}, calls: []string{"create (dry run)", "create"}, written: true},
		{name: "namespaced without namespace", change: Change{Text: text, Namespaced: true}, input: "No namespace"},
		{name: "empty", change: Change{Text: "  \n"}, input: "Nothing to send"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := newFake()
			s := &Service{API: api, Cache: api, Audit: &audits{}}
			tc.change.Kind = csiDrivers
			out, err := s.Create(context.Background(), tc.change)
			var in *edit.InputError
			if tc.input != "" {
				if !errors.As(err, &in) || in.Title != tc.input {
					t.Fatalf("err = %v, want %q", err, tc.input)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(api.calls, tc.calls) || out.Written != tc.written {
				t.Errorf("calls %q written %v", api.calls, out.Written)
			}
			if _, stored := api.objs["usecase-edit-new"]; stored != tc.written {
				t.Errorf("stored %v", stored)
			}
		})
	}
}

// TestRebase: a merge replays the user's lines onto the current version;
// overlapping lines are edit.ErrOverlap with the current text to compare.
func TestRebase(t *testing.T) {
	api := newFake(driver("usecase-edit-r", false))
	base := textOf(t, api.objs["usecase-edit-r"])
	changed := api.objs["usecase-edit-r"].DeepCopy()
	_ = unstructured.SetNestedField(changed.Object, true, "spec", "podInfoOnMount")
	api.store(changed)
	cases := []struct {
		name     string
		mine     string
		keepMine bool
		want     []string // lines the result holds
		err      error
	}{
		{name: "merge", mine: strings.Replace(base, "attachRequired: false", "attachRequired: true", 1),
			want: []string{"attachRequired: true", "podInfoOnMount: true"}},
		{name: "keep mine", keepMine: true, mine: strings.Replace(base, "attachRequired: false", "attachRequired: true", 1),
			want: []string{"attachRequired: true", "podInfoOnMount: false"}},
		{name: "overlap", mine: strings.Replace(base, "podInfoOnMount: false", "podInfoOnMount: null", 1), err: edit.ErrOverlap},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{API: api, Cache: api, Audit: &audits{}}
			r, err := s.Rebase(context.Background(), Rebase{Kind: csiDrivers, Name: "usecase-edit-r", Text: tc.mine, BaseText: base, KeepMine: tc.keepMine})
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if r.Version != api.objs["usecase-edit-r"].GetResourceVersion() || !strings.Contains(r.CurrentText, "podInfoOnMount: true") {
				t.Errorf("rebased onto %s: %q", r.Version, r.CurrentText)
			}
			for _, line := range tc.want {
				if !strings.Contains(r.Text, line) {
					t.Errorf("text lacks %q:\n%s", line, r.Text)
				}
			}
		})
	}
}

// TestDelete: only the UID the user saw is deleted; a refusal comes back
// with the confirmation page read again.
func TestDelete(t *testing.T) {
	cases := []struct {
		name    string
		uid     string
		calls   []string
		audited []string
		deleted bool
	}{
		{name: "the object seen", uid: "uid-usecase-edit-d", deleted: true,
			calls: []string{"delete (dry run)", "get", "delete"}, audited: []string{"delete (dry run)", "delete"}},
		{name: "a replaced object", uid: "uid-of-another",
			calls: []string{"delete (dry run)", "get", "get", "delete (dry run)"}, audited: []string{"delete (dry run)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := newFake(driver("usecase-edit-d", false))
			audit := &audits{}
			s := &Service{API: api, Cache: api, Audit: audit}
			out, err := s.Delete(context.Background(), Deletion{Kind: csiDrivers, Name: "usecase-edit-d", UID: tc.uid, Cached: true})
			if tc.deleted != (err == nil) {
				t.Fatalf("err = %v", err)
			}
			if !tc.deleted && (!apierrors.IsConflict(err) || out.PlanErr != nil || out.Plan.DryRunErr != nil) {
				t.Errorf("refusal %v, plan %+v (%v)", err, out.Plan, out.PlanErr)
			}
			if !slices.Equal(api.calls, tc.calls) || !slices.Equal(audit.verbs(), tc.audited) {
				t.Errorf("calls %q audited %q", api.calls, audit.verbs())
			}
			if audit.fromCache != 1 || audit.writes[0].From == nil {
				t.Errorf("before: %d cache fills, from %v", audit.fromCache, audit.writes[0].From)
			}
			if _, ok := api.objs["usecase-edit-d"]; ok == tc.deleted {
				t.Errorf("stored %v after deletion %v", ok, tc.deleted)
			}
		})
	}
}

// TestPlanDelete counts a CRD's custom resources, and only a CRD's.
func TestPlanDelete(t *testing.T) {
	for _, k := range []kube.Kind{csiDrivers, {ID: kube.CRDs, Singular: "CustomResourceDefinition"}} {
		api := newFake(driver("usecase-edit-p", false))
		p, err := (&Service{API: api, Cache: api, Audit: &audits{}}).PlanDelete(context.Background(), k, "usecase-edit-p")
		if err != nil || p.DryRunErr != nil || p.Object.GetUID() != "uid-usecase-edit-p" {
			t.Fatalf("%s: %+v %v", k.ID, p, err)
		}
		if p.Counted != (k.ID == kube.CRDs) || slices.Contains(api.calls, "count") != p.Counted {
			t.Errorf("%s: counted %v, calls %q", k.ID, p.Counted, api.calls)
		}
	}
}

// TestListInstances counts a CRD's objects and reads the asked page.
func TestListInstances(t *testing.T) {
	api := newFake()
	list, err := (&Service{API: api, Cache: api, Audit: &audits{}}).ListInstances(context.Background(), csiDrivers, driver("crd", false), 100, "next", "")
	if err != nil || list.CountErr != nil || list.Count.Count != 3 || list.Table == nil {
		t.Fatalf("%+v, %v", list, err)
	}
	if !slices.Equal(api.calls, []string{"count", "table 100 next"}) {
		t.Errorf("calls %q", api.calls)
	}
}
