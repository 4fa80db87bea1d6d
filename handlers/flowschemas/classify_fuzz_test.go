package flowschemas

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/present"
)

// FuzzClassifyForm decodes arbitrary query strings as the classifier's form
// (the classifier's form decoder), turns them into a request, and
// classifies and lays out every request the form accepts. Nothing may panic;
// an accepted form has a user, a verb, and a path or resource as the apiserver
// would see them.
func FuzzClassifyForm(f *testing.F) {
	for _, ex := range present.ClassifyExamples() {
		_, query, _ := strings.Cut(ex.Href, "?")
		f.Add(query)
	}
	f.Add("serviceaccount=a/b/c&user=x&groups=%2C%2C+system:masters&exact=1&verb=GET&resource=pods/status/x")
	f.Add("kind=nonresource&user=u&verb=get&path=healthz")
	f.Add("user=%00&verb=%E2%80%AE&apigroup=core&resource=/")
	f.Add("serviceaccount=ns:x/name&user=system:serviceaccount:ns:x:name&groups=a%0Ab%0Dc%09d")
	f.Add("%zz=1&user=;&verb=list&resource=pods")

	f.Fuzz(func(t *testing.T, query string) {
		v, _ := url.ParseQuery(query) // a malformed pair is dropped, as echo does
		form := parseClassifyForm(v)
		req, errs := present.ClassifyRequest(form)
		if len(errs) > 0 {
			for field, msg := range errs {
				if field == "" || msg == "" {
					t.Fatalf("field error %q: %q", field, msg)
				}
			}
			return
		}
		if req.User == "" || req.Verb == "" {
			t.Fatalf("accepted a request without user or verb: %+v", req)
		}
		if req.IsResourceRequest == form.NonResource {
			t.Fatalf("resource request %v for a form with NonResource %v", req.IsResourceRequest, form.NonResource)
		}
		if form.NonResource && !strings.HasPrefix(req.Path, "/") {
			t.Fatalf("accepted non-resource path %q", req.Path)
		}
		if !form.NonResource && (req.Resource == "" || strings.Contains(req.Subresource, "/")) {
			t.Fatalf("accepted resource %q subresource %q", req.Resource, req.Subresource)
		}
		sorted := slices.Clone(req.Groups)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(req.Groups) {
			t.Fatalf("groups repeat: %q", req.Groups)
		}
		// The apiserver's built-in exempt and catch-all FlowSchemas only.
		res := apf.Classify(nil, nil, req)
		view := present.ClassifyResultView(res, req, len(res.Trace))
		if view.FlowSchema == "" {
			t.Fatalf("no FlowSchema shown for %+v", req)
		}
	})
}
