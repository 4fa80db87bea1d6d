package flowschemas

import (
	"net/url"
	"strings"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// parseClassifyForm reads the classifier's GET form. A form is submitted
// once any of its fields is in the query.
func parseClassifyForm(v url.Values) model.ClassifyForm {
	f := model.ClassifyForm{
		User:           strings.TrimSpace(v.Get("user")),
		Groups:         strings.TrimSpace(v.Get("groups")),
		ServiceAccount: strings.TrimSpace(v.Get("serviceaccount")),
		ExactGroups:    v.Get("exact") != "",
		NonResource:    v.Get("kind") == "nonresource",
		Verb:           strings.ToLower(strings.TrimSpace(v.Get("verb"))),
		APIGroup:       strings.TrimSpace(v.Get("apigroup")),
		Resource:       strings.TrimSpace(v.Get("resource")),
		Namespace:      strings.TrimSpace(v.Get("namespace")),
		Path:           strings.TrimSpace(v.Get("path")),
	}
	for _, k := range []string{"user", "groups", "serviceaccount", "kind", "verb", "apigroup", "resource", "namespace", "path"} {
		if v.Has(k) {
			f.Submitted = true
		}
	}
	return f
}
