package crd

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
)

// Lint codes of the names and pruning findings.
const (
	CodePreserveUnknownFields = "preserve-unknown-fields"
	CodeNamesDiffer           = "accepted-names-differ"
)

// lintPreserveUnknownFields flags spec.preserveUnknownFields: true, a
// v1beta1 leftover. The API server (apiextensions-apiserver
// pkg/apis/apiextensions/validation/validation.go, validatePreserveUnknownFields)
// refuses it on create and on an update from false ("cannot set to true, set
// x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema
// instead") and keeps it only on CRDs that already had it. While it is true,
// validateCustomResourceDefinitionSpec requires neither a structural schema
// nor a schema at all, forbids defaults and any conversion but None: the API
// server stores every unknown field as sent. The CRD works, so a warning, not
// a danger; setting it false is one way and prunes what the schema does not
// describe from objects as they are next written.
func lintPreserveUnknownFields(c *apiextensionsv1.CustomResourceDefinition) []admission.Finding {
	if !c.Spec.PreserveUnknownFields {
		return nil
	}
	return []admission.Finding{{Code: CodePreserveUnknownFields, Severity: admission.Warning, Title: "Unknown fields preserved",
		Message: "spec.preserveUnknownFields is true (a v1beta1 leftover the API server no longer lets a CRD take): unknown fields are stored as sent, " +
			"and defaults and conversion webhooks cannot be used. Set it to false (mark free-form parts with x-kubernetes-preserve-unknown-fields); " +
			"it cannot be set back to true."}}
}

// lintAcceptedNames compares status.acceptedNames with spec.names. They
// differ when the naming controller refused a change (another CRD of the
// group holds a name): the API server keeps serving the accepted names.
// A CRD the controller has not seen yet (no acceptedNames) is not judged.
func lintAcceptedNames(c *apiextensionsv1.CustomResourceDefinition) []admission.Finding {
	acc, spec := c.Status.AcceptedNames, c.Spec.Names
	if acc.Plural == "" && acc.Kind == "" {
		return nil
	}
	var diffs []string
	field := func(name, want, got string) {
		if want != got {
			diffs = append(diffs, name+" "+quoteOrNone(want)+" is served as "+quoteOrNone(got))
		}
	}
	field("plural", spec.Plural, acc.Plural)
	field("singular", spec.Singular, acc.Singular)
	field("kind", spec.Kind, acc.Kind)
	field("listKind", spec.ListKind, acc.ListKind)
	if !sameSet(spec.ShortNames, acc.ShortNames) {
		diffs = append(diffs, "shortNames ["+strings.Join(spec.ShortNames, ", ")+"] are served as ["+strings.Join(acc.ShortNames, ", ")+"]")
	}
	if !sameSet(spec.Categories, acc.Categories) {
		diffs = append(diffs, "categories ["+strings.Join(spec.Categories, ", ")+"] are served as ["+strings.Join(acc.Categories, ", ")+"]")
	}
	if len(diffs) == 0 {
		return nil
	}
	return []admission.Finding{{Code: CodeNamesDiffer, Severity: admission.Warning, Title: "Accepted names differ",
		Message: "The API server did not accept every name in spec.names (a name conflict): " + strings.Join(diffs, "; ") + "."}}
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return "“" + s + "”"
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
