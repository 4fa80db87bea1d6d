package page

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/labelselector"
	"github.com/clusterdesk/clusterdesk/internal/present"
)

func labelled(name string, l map[string]string) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

func TestSelectorFiltersAndTravelsInLinks(t *testing.T) {
	items := []*storagev1.CSIDriver{
		labelled("a", map[string]string{"app": "web", "tier": "front"}),
		labelled("b", map[string]string{"app": "db"}),
		labelled("c", nil),
	}
	for _, tc := range []struct {
		sel  string
		want []string
	}{
		{"", []string{"a", "b", "c"}},
		{"app=web", []string{"a"}},
		{"app!=web", []string{"b", "c"}},
		{"app in (web,db)", []string{"a", "b"}},
		{"!app", []string{"c"}},
		{"app,tier=front", []string{"a"}},
	} {
		q := ParseListQuery(url.Values{"selector": {tc.sel}, "sort": {"name"}, "dir": {"desc"}})
		if q.SelectorErr != nil {
			t.Fatalf("%q: %v", tc.sel, q.SelectorErr)
		}
		p := present.CSIDriverList(present.Selected(items, q), q, time.Now())
		var got []string
		for _, r := range p.Rows {
			got = append(got, r.Name)
		}
		if strings.Join(got, ",") != strings.Join(reversed(tc.want), ",") {
			t.Errorf("%q: rows %v, want %v (desc)", tc.sel, got, reversed(tc.want))
		}
		if tc.sel == "" {
			continue
		}
		if p.Selector != tc.sel {
			t.Errorf("%q: page says selector %q", tc.sel, p.Selector)
		}
		for _, c := range p.Columns {
			if c.Sortable && !hasSelector(t, c.SortHref, tc.sel) {
				t.Errorf("%q: sort link %s drops the selector", tc.sel, c.SortHref)
			}
		}
		if !hasSelector(t, p.View, tc.sel) {
			t.Errorf("%q: view %s drops the selector", tc.sel, p.View)
		}
	}
}

func TestSelectorPagingLinksKeepIt(t *testing.T) {
	var items []*storagev1.CSIDriver
	for i := range 2*present.PageSize + 5 {
		items = append(items, labelled(strings.Repeat("x", 3)+fmt.Sprintf("%020d", i), map[string]string{"team": "a"}))
	}
	items = append(items, labelled("other", map[string]string{"team": "b"}))
	q := ParseListQuery(url.Values{"selector": {"team=a"}})
	p := present.CSIDriverList(present.Selected(items, q), q, time.Now())
	if p.Shown != 2*present.PageSize+5 || p.Pager.Pages != 3 {
		t.Fatalf("shown %d pages %d", p.Shown, p.Pager.Pages)
	}
	if !hasSelector(t, p.Pager.Next, "team=a") {
		t.Errorf("next %q drops the selector", p.Pager.Next)
	}
	for _, l := range p.Pager.Links {
		if !l.Gap && !hasSelector(t, l.Href, "team=a") {
			t.Errorf("page link %q drops the selector", l.Href)
		}
	}
}

func TestBadSelectorShowsNothingAndSaysWhy(t *testing.T) {
	items := []*storagev1.CSIDriver{labelled("a", map[string]string{"app": "web"})}
	for _, bad := range []string{"app=(", "app=web,", "app in (", "a b c", "=x", strings.Repeat("k", labelselector.MaxLen+1)} {
		q := ParseListQuery(url.Values{"selector": {bad}})
		if q.SelectorErr == nil {
			t.Errorf("%q parsed", bad)
			continue
		}
		p := present.CSIDriverList(present.Selected(items, q), q, time.Now())
		if len(p.Rows) != 0 || p.SelectorError == "" || !strings.Contains(p.Empty, "label selector") {
			t.Errorf("%q: rows %d, error %q, empty %q", bad, len(p.Rows), p.SelectorError, p.Empty)
		}
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func hasSelector(t *testing.T, href, sel string) bool {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("selector") == sel
}

// BenchmarkSelected50k is the label selector's cost on a list view of 50,000
// cached objects (a CSR retry storm's size), a tenth of them matching.
func BenchmarkSelected50k(b *testing.B) {
	items := make([]*storagev1.CSIDriver, 50_000)
	for i := range items {
		team := "other"
		if i%10 == 0 {
			team = "a"
		}
		items[i] = labelled(fmt.Sprintf("%020d", i), map[string]string{"team": team, "app": "web", "tier": "front"})
	}
	q := ParseListQuery(url.Values{"selector": {"team=a,app in (web,db),!canary"}})
	b.ReportAllocs()
	for b.Loop() {
		if n := len(present.Selected(items, q)); n != 5_000 {
			b.Fatal(n)
		}
	}
}
