package present

import (
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The CRD list's lint=drift keeps the CRDs with stored-version drift (the
// home page's attention item links there), says so with a link that clears
// it, and keeps it in the sort links and the view's URL.
func TestCRDListLintDriftKeepsOnlyDrift(t *testing.T) {
	now := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	items := []*apiextensionsv1.CustomResourceDefinition{
		lintCRD("clean.example.com", nil),
		lintCRD("legacy.example.com", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.PreserveUnknownFields = true // a warning, not drift
		}),
		lintCRD("two.example.com", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Status.StoredVersions = []string{"v1beta1", "v1"} // several stored versions
		}),
	}
	q := ListQuery{Lint: "drift"}
	q.LintErr = LintFilterError("crds", q.Lint)
	p := CRDList(items, q, now)
	var got []string
	for _, r := range p.Rows {
		got = append(got, r.Name)
	}
	if !slices.Equal(got, []string{"two.example.com"}) || p.Shown != 1 || p.Total != 3 {
		t.Errorf("lint=drift rows %v (%d of %d), want two.example.com only", got, p.Shown, p.Total)
	}
	if p.LintFilter != "drift" || p.LintWords != "with stored-version drift" || p.LintClearHref != "/crds" || p.LintError != "" {
		t.Errorf("filter note: %q %q clear %q error %q", p.LintFilter, p.LintWords, p.LintClearHref, p.LintError)
	}
	if !strings.Contains(p.View, "lint=drift") || !strings.Contains(p.Columns[1].SortHref, "lint=drift") {
		t.Errorf("view %q and sort link %q lose the filter", p.View, p.Columns[1].SortHref)
	}

	q = ListQuery{Lint: "drift", Filter: "nothing-matches", Sort: "age"}
	p = CRDList(items, q, now)
	if clear := p.LintClearHref; !strings.Contains(clear, "q=nothing-matches") || strings.Contains(clear, "lint=") {
		t.Errorf("clear link %q should keep the text filter and drop lint", clear)
	}
}

func TestLintFilterErrorNamesTheKnownValues(t *testing.T) {
	for _, tc := range []struct{ kind, value, want string }{
		{"crds", "", ""},
		{"crds", "drift", ""},
		{"validatingwebhooks", "danger", ""},
		{"mutatingwebhooks", "danger", ""},
		{"crds", "bogus", `lint="bogus" is not a filter of this list; it knows lint=danger, lint=drift`},
		{"validatingwebhooks", "drift", `lint="drift" is not a filter of this list; it knows lint=danger`},
		{"csidrivers", "danger", `this list has no lint filter (lint="danger")`},
	} {
		err := LintFilterError(tc.kind, tc.value)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%s lint=%q: %q, want %q", tc.kind, tc.value, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%s lint=%q: no error, want %q", tc.kind, tc.value, tc.want)
		}
	}
	// A refused value keeps no row and says why.
	now := time.Now()
	q := ListQuery{Lint: "bogus"}
	q.LintErr = LintFilterError("crds", q.Lint)
	p := CRDList([]*apiextensionsv1.CustomResourceDefinition{lintCRD("a.example.com", nil)}, q, now)
	if len(p.Rows) != 0 || p.LintError == "" {
		t.Errorf("lint=bogus: %d rows, error %q", len(p.Rows), p.LintError)
	}
}
