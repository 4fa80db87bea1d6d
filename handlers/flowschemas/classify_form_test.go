package flowschemas

import (
	"net/url"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

func TestParseClassifyForm(t *testing.T) {
	if f := parseClassifyForm(url.Values{}); f.Submitted {
		t.Error("an empty query is not a submission")
	}
	if f := parseClassifyForm(url.Values{"q": {"x"}}); f.Submitted {
		t.Error("unrelated parameters are not a submission")
	}
	f := parseClassifyForm(url.Values{"user": {" bob "}, "verb": {"LIST"}, "kind": {"nonresource"}, "exact": {"1"}, "path": {"/version"}})
	if !f.Submitted || f.User != "bob" || f.Verb != "list" || !f.NonResource || !f.ExactGroups || f.Path != "/version" {
		t.Errorf("parsed %+v", f)
	}
}

func TestClassifyExamplesClassify(t *testing.T) {
	fss, pls := testfixtures.DefaultAPF(t)
	want := []string{"exempt", "system-leader-election", "system-node-high", "service-accounts", "probes", "global-default"}
	exs := present.ClassifyExamples()
	if len(exs) != len(want) {
		t.Fatalf("%d examples", len(exs))
	}
	for i, ex := range exs {
		u, err := url.Parse(ex.Href)
		if err != nil || u.Path != urls.Classify {
			t.Fatalf("%s: href %s", ex.Label, ex.Href)
		}
		f := parseClassifyForm(u.Query())
		req, errs := present.ClassifyRequest(f)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", ex.Label, errs)
		}
		if got := apf.Classify(fss, apf.LevelsOf(pls), req).FlowSchema.Name; got != want[i] {
			t.Errorf("%s: classified to %s, want %s", ex.Label, got, want[i])
		}
	}
}
