package present

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func lintCRD(name string, change func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"}
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Names: names, Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names, StoredVersions: []string{"v1"}},
	}
	if change != nil {
		change(c)
	}
	return c
}

func cellByColumn(p model.ListPage, r model.Row, key string) model.Cell {
	for i, c := range p.Columns {
		if c.Key == key {
			return r.Cells[i]
		}
	}
	return model.Cell{}
}

func badgeTextsOf(c model.Cell) []string {
	var out []string
	for _, b := range c.Badges {
		out = append(out, b.Text)
	}
	return out
}

func TestCRDListCountsLintsAndSortsByThem(t *testing.T) {
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	items := []*apiextensionsv1.CustomResourceDefinition{
		lintCRD("clean.example.com", nil),
		lintCRD("legacy.example.com", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.PreserveUnknownFields = true // warning
			c.Spec.Names.Plural = "legacies"    // accepted names differ: warning
		}),
		lintCRD("broken.example.com", func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].Served = false // nothing served: danger; stored not served: warning
		}),
	}
	p := CRDList(items, ListQuery{Sort: "lints", Desc: true}, now)
	var order []string
	for _, r := range p.Rows {
		order = append(order, r.Name)
	}
	if want := []string{"broken.example.com", "legacy.example.com", "clean.example.com"}; !slices.Equal(order, want) {
		t.Errorf("sorted by lints, descending: %v, want %v", order, want)
	}
	want := map[string][]string{
		"broken.example.com": {"1 danger", "1 warning"},
		"legacy.example.com": {"2 warnings"},
		"clean.example.com":  nil,
	}
	for _, r := range p.Rows {
		c := cellByColumn(p, r, "lints")
		if got := badgeTextsOf(c); !slices.Equal(got, want[r.Name]) {
			t.Errorf("%s: lint badges %v, want %v", r.Name, got, want[r.Name])
		}
		if want[r.Name] == nil && c.Text != "none" {
			t.Errorf("%s: lint cell %q, want none", r.Name, c.Text)
		}
	}
}

func TestWebhookListCountsLints(t *testing.T) {
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	good := webhookConfig()
	bad := webhookConfig()
	bad.Name = "bad"
	// Each webhook's empty caBundle (a warning) becomes an invalid one (a danger).
	bad.Webhooks[0].ClientConfig.CABundle = []byte("junk")
	bad.Webhooks[1].ClientConfig.CABundle = []byte("junk")
	want := admission.ConfigTally(admission.FromValidating(good), now)
	want.Errors, want.Warnings = want.Errors+2, want.Warnings-2
	p := WebhookList([]*admissionregistrationv1.ValidatingWebhookConfiguration{good, bad}, ListQuery{Sort: "lints", Desc: true}, now)
	if p.Rows[0].Name != "bad" {
		t.Errorf("sorted by lints, descending: %s first", p.Rows[0].Name)
	}
	wantText := []string{fmt.Sprintf("%d danger", want.Errors)}
	if want.Warnings > 0 {
		wantText = append(wantText, plural(want.Warnings, "warning", "warnings"))
	}
	if got := badgeTextsOf(cellByColumn(p, p.Rows[0], "lints")); !slices.Equal(got, wantText) {
		t.Errorf("lint badges %v, want %v", got, wantText)
	}
	if !p.Columns[slices.IndexFunc(p.Columns, func(c model.Column) bool { return c.Key == "lints" })].Sortable {
		t.Error("the lint column is not sortable")
	}
}

func TestColumnsGiveWayByPriority(t *testing.T) {
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	p := CRDList([]*apiextensionsv1.CustomResourceDefinition{lintCRD("a.example.com", nil)}, ListQuery{}, now)
	prio := map[string]model.Priority{}
	for _, c := range p.Columns {
		prio[c.Key] = c.Priority
	}
	if prio["name"] != model.PrimaryColumn || prio["lints"] != model.PrimaryColumn || prio["group"] != model.SecondaryColumn || prio["scope"] != model.TertiaryColumn {
		t.Errorf("priorities %v", prio)
	}
	// The cells carry their column's priority and label, for the name
	// cell's second line (live rows render without the columns).
	for i, c := range p.Rows[0].Cells[1:] {
		col := p.Columns[i+1]
		if c.Priority != col.Priority || c.Label != col.Label {
			t.Errorf("cell %d: priority %d label %q, want %d %q", i+1, c.Priority, c.Label, col.Priority, col.Label)
		}
	}
}

func TestSubjectLineShowsFiveSANs(t *testing.T) {
	r := &csr.Request{CommonName: "svc", PublicKey: "ECDSA P-256", IPAddresses: []string{"10.0.0.1"}}
	for i := range 199 {
		r.DNSNames = append(r.DNSNames, fmt.Sprintf("n%03d.example.com", i))
	}
	line, count := subjectLine(r)
	if !strings.Contains(line, "n003.example.com") || strings.Contains(line, "n005.example.com") || strings.Contains(line, "10.0.0.1") {
		t.Errorf("line %q: want the first five SANs only", line)
	}
	more := MoreSANs(r)
	if count != 195 || len(more) != 195 || more[0] != "DNS n005.example.com" || more[194] != "IP 10.0.0.1" {
		t.Errorf("%d (%d) more, first %q, last %q", count, len(more), more[0], more[len(more)-1])
	}
	if line, more := subjectLine(&csr.Request{CommonName: "x", DNSNames: []string{"a", "b"}}); more != 0 || !strings.Contains(line, "DNS a, b") {
		t.Errorf("two SANs: %q, %v", line, more)
	}
	f := sanField("DNS names", r.DNSNames)
	if len(f.More) != 194 || strings.Count(f.Value, ",") != 4 {
		t.Errorf("field %q with %d more", f.Value, len(f.More))
	}
}
