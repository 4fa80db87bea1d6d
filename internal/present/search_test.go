package present

import (
	"fmt"
	"slices"
	"testing"

	"github.com/clusterdesk/clusterdesk/views/model"
)

func hitNames(g model.SearchGroup) []string {
	var out []string
	for _, h := range g.Hits {
		out = append(out, h.Name)
	}
	return out
}

func TestSearchRanksAndGroups(t *testing.T) {
	sources := []SearchSource{
		{KindID: "flowschemas", Title: "FlowSchemas", Names: []string{"system-leader-election", "leader-election", "kube-leader", "workload-leader-election", "exempt"}},
		{KindID: "crds", Title: "CustomResourceDefinitions", Names: []string{"leaderelections.example.com", "widgets.example.com"}},
		{KindID: "csidrivers", Title: "CSIDrivers", Names: []string{"ebs.csi.aws.com"}},
	}
	p := Search("Leader", sources)
	if p.Query != "Leader" {
		t.Errorf("query = %q", p.Query)
	}
	if len(p.Groups) != 2 {
		t.Fatalf("groups = %d, want 2 (csidrivers has no hit): %+v", len(p.Groups), p.Groups)
	}
	fs := p.Groups[0]
	want := []string{"leader-election", "kube-leader", "system-leader-election", "workload-leader-election"}
	if got := hitNames(fs); !slices.Equal(got, want) {
		t.Errorf("flowschema hits = %v, want %v (prefix, then part prefix by length)", got, want)
	}
	if fs.ListURL != "/flowschemas?q=Leader" {
		t.Errorf("list URL = %q", fs.ListURL)
	}
	h := fs.Hits[2]
	if h.Before != "system-" || h.Match != "leader" || h.After != "-election" || h.Href != "/flowschemas/system-leader-election" {
		t.Errorf("hit split = %+v", h)
	}
	if p.Total != 5 {
		t.Errorf("total = %d, want 5", p.Total)
	}
}

func TestSearchExactFirstAndLimit(t *testing.T) {
	var names []string
	for i := range 15 {
		names = append(names, fmt.Sprintf("a-%02d-node", i))
	}
	names = append(names, "node")
	p := Search("node", []SearchSource{{KindID: "csrs", Title: "CertificateSigningRequests", Names: names}})
	g := p.Groups[0]
	if g.Hits[0].Name != "node" {
		t.Errorf("first hit = %q, want the exact name", g.Hits[0].Name)
	}
	if len(g.Hits) != SearchLimit || g.More != 16-SearchLimit || p.Total != 16 {
		t.Errorf("hits %d, more %d, total %d", len(g.Hits), g.More, p.Total)
	}
}

func TestSearchNotes(t *testing.T) {
	p := Search("x", []SearchSource{
		{KindID: "csrs", Title: "CertificateSigningRequests", Forbidden: true, Names: []string{"x"}},
		{KindID: "crds", Title: "CustomResourceDefinitions", Loading: true},
		{KindID: "csidrivers", Title: "CSIDrivers", Err: "boom"},
	})
	if len(p.Groups) != 0 {
		t.Errorf("a forbidden kind must not be searched: %+v", p.Groups)
	}
	if len(p.Notes) != 3 {
		t.Errorf("notes = %v", p.Notes)
	}
}

func TestSearchEmptyQueryAndOddNames(t *testing.T) {
	if p := Search("", []SearchSource{{KindID: "csrs", Names: []string{"a"}}}); len(p.Groups) != 0 || p.Total != 0 {
		t.Errorf("empty query found %+v", p)
	}
	// A name whose lower-case form has another length is found but not cut.
	p := Search("x", []SearchSource{{KindID: "csrs", Title: "C", Names: []string{"İx"}}})
	if len(p.Groups) != 1 || p.Groups[0].Hits[0].Before != "İx" || p.Groups[0].Hits[0].Match != "" {
		t.Errorf("odd name: %+v", p.Groups)
	}
}
