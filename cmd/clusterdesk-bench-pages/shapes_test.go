package main

import (
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestLongNamesAreValidAnd253: the storm's and the CRD's long names are the
// longest the API server accepts, and accepted.
func TestLongNamesAreValidAnd253(t *testing.T) {
	cs := crdShapes{fixtures: []*apiextensionsv1.CustomResourceDefinition{
		{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "workflows"}}},
		{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "certificates"}}},
	}}
	for _, name := range []string{stormCSRName(0), stormCSRName(4999), cs.name(1)} {
		if len(name) != 253 {
			t.Errorf("%q is %d characters, want 253", name, len(name))
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("%q: %v", name, errs)
		}
	}
	if g := cs.group(1); !strings.HasSuffix(g, "."+shapesGroup) || validation.IsDNS1123Subdomain(g) != nil {
		t.Errorf("group %q", g)
	}
	if cs.name(2) != "workflows.g0002."+shapesGroup {
		t.Errorf("name(2) = %q", cs.name(2))
	}
}

func TestShapeCountsSplit(t *testing.T) {
	c := shapeCounts{CSRs: 50000, Decided: 45000, Storm: 5000, SANs: 20}
	if got := c.regular(); got != 50000-5000-20-1 {
		t.Errorf("regular = %d", got)
	}
	if (shapeCounts{CSRs: 3, Storm: 10}).regular() != 0 {
		t.Error("regular may not go negative")
	}
}

func TestVerdict(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		r    row
		want string
	}{
		{row{Target: targetList, Console: stats{P50: ms, Bytes: 1000}, Raw: stats{P50: 20 * ms}}, "≥10× ok"},
		{row{Target: targetList, Console: stats{P50: ms, Bytes: 1000}, Raw: stats{P50: 5 * ms}}, "≥10× MISS"},
		{row{Target: targetDetail, Console: stats{P50: 2 * ms, Bytes: 1000}, Raw: stats{P50: ms}}, "≤2× GET ok"},
		{row{Target: targetDetail, Console: stats{P50: 3 * ms, Bytes: 1000}, Raw: stats{P50: ms}}, "≤2× GET MISS"},
		{row{Target: targetDetail, Console: stats{P50: ms, Bytes: 500_000}, Raw: stats{P50: ms}}, "≤2× GET ≤400 KB MISS"},
		{row{Console: stats{P50: ms}}, "-"},
	}
	for _, tt := range tests {
		if got := verdict(tt.r); got != tt.want {
			t.Errorf("verdict(%+v) = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestShapePages(t *testing.T) {
	cs := crdShapes{fixtures: []*apiextensionsv1.CustomResourceDefinition{
		{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "workflows"}}},
	}}
	ps := shapePages(shapeCounts{CSRs: 100, Storm: 10, RequesterStorm: 12, SANs: 1, CRDs: 3, ManyVersionCRDs: 1}, cs, "https://h", 100, 3)
	lists, details := 0, 0
	for _, p := range ps {
		switch p.target {
		case targetList:
			lists++
			// One LIST per list; the home page beside the LISTs of what it reads.
			if len(p.raw) != 1 && p.page != "/" {
				t.Errorf("%s: raw %v", p.page, p.raw)
			}
			for _, raw := range p.raw {
				if !strings.HasPrefix(raw, "https://h/apis/") {
					t.Errorf("%s: raw %v", p.page, p.raw)
				}
			}
		case targetDetail:
			details++
			if len(p.raw) != 1 || !strings.HasSuffix(p.raw[0], p.page[strings.LastIndexByte(p.page, '/'):]) {
				t.Errorf("%s: the raw GET must be of the same object: %v", p.page, p.raw)
			}
		default:
			t.Errorf("%s has no target", p.page)
		}
	}
	// Eight CSR queue views (a name inside the storm, the requester storm),
	// two CRD lists and the home page; storm, SANs, annotation; three CRDs and
	// one many-version.
	if lists != 11 || details != 7 {
		t.Errorf("%d lists, %d details", lists, details)
	}
}

func TestShortenKeepsTableRowsReadable(t *testing.T) {
	long := "/csrs/" + stormCSRName(0)
	got := shorten(long + " (storm)")
	if len(got) > 100 || !strings.HasPrefix(got, "/csrs/storm-00000.") || !strings.Contains(got, " chars]") {
		t.Errorf("shorten = %q", got)
	}
	if shorten("/crds/x.y") != "/crds/x.y" {
		t.Error("a short path must stay as it is")
	}
}

// TestDeployGOMEMLIMIT: the shapes' memory is read under the soft limit the
// deployment sets, so the two must not drift apart.
func TestDeployGOMEMLIMIT(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/base/clusterdesk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "- name: GOMEMLIMIT" && i+1 < len(lines) {
			if got := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i+1]), "value:")); got != deployGOMEMLIMIT {
				t.Errorf("deploy/ sets GOMEMLIMIT %q, the benchmark reads memory under %q", got, deployGOMEMLIMIT)
			}
			return
		}
	}
	t.Fatal("deploy/base/clusterdesk.yaml sets no GOMEMLIMIT")
}
