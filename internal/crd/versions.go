package crd

import (
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
)

// Version is one entry of spec.versions with what the status says about it.
type Version struct {
	Name               string
	Served             bool
	Storage            bool // the version new objects are written in
	Stored             bool // listed in status.storedVersions: objects may exist in etcd in it
	Deprecated         bool
	DeprecationWarning string // what clients are told; the API server's default when unset
	Subresources       []string
	Scale              *Scale
	PrinterColumns     []Column
	SelectableFields   []string
	Schema             bool // the version has an openAPIV3Schema
	Fields             int  // its fields below the root (Fields), when it has one
}

// Scale is the scale subresource's paths.
type Scale struct {
	SpecReplicasPath, StatusReplicasPath, LabelSelectorPath string
}

// Column is an additionalPrinterColumn.
type Column struct {
	Name, Type, Format, JSONPath, Description string
	Priority                                  int32
}

// Versions lists spec.versions in the CRD's order, with each schema's count
// of fields (the schema explorer builds the tree of one version: Tree).
func Versions(c *apiextensionsv1.CustomResourceDefinition) []Version {
	out := make([]Version, 0, len(c.Spec.Versions))
	for _, v := range c.Spec.Versions {
		ver := Version{
			Name: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated,
			Stored: slices.Contains(c.Status.StoredVersions, v.Name),
		}
		if v.Deprecated {
			ver.DeprecationWarning = c.Spec.Group + "/" + v.Name + " " + c.Spec.Names.Kind + " is deprecated"
			if v.DeprecationWarning != nil {
				ver.DeprecationWarning = *v.DeprecationWarning
			}
		}
		if s := v.Subresources; s != nil {
			if s.Status != nil {
				ver.Subresources = append(ver.Subresources, "status")
			}
			if s.Scale != nil {
				ver.Subresources = append(ver.Subresources, "scale")
				ver.Scale = &Scale{SpecReplicasPath: s.Scale.SpecReplicasPath, StatusReplicasPath: s.Scale.StatusReplicasPath}
				if s.Scale.LabelSelectorPath != nil {
					ver.Scale.LabelSelectorPath = *s.Scale.LabelSelectorPath
				}
			}
		}
		for _, pc := range v.AdditionalPrinterColumns {
			ver.PrinterColumns = append(ver.PrinterColumns, Column{Name: pc.Name, Type: pc.Type, Format: pc.Format,
				JSONPath: pc.JSONPath, Description: pc.Description, Priority: pc.Priority})
		}
		for _, f := range v.SelectableFields {
			ver.SelectableFields = append(ver.SelectableFields, f.JSONPath)
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			ver.Schema, ver.Fields = true, Fields(v.Schema.OpenAPIV3Schema)
		}
		out = append(out, ver)
	}
	return out
}

// FindVersion returns the named version, or false.
func FindVersion(c *apiextensionsv1.CustomResourceDefinition, name string) (apiextensionsv1.CustomResourceDefinitionVersion, bool) {
	for _, v := range c.Spec.Versions {
		if v.Name == name {
			return v, true
		}
	}
	return apiextensionsv1.CustomResourceDefinitionVersion{}, false
}

// Conversion describes spec.conversion.
type Conversion struct {
	Strategy       string // "None" or "Webhook"
	Target         string // the webhook's Service or URL; "" for None
	ReviewVersions string
	CABundle       string
}

// ConversionOf describes how the API server converts between versions.
func ConversionOf(c *apiextensionsv1.CustomResourceDefinition) Conversion {
	conv := Conversion{Strategy: string(apiextensionsv1.NoneConverter)}
	cv := c.Spec.Conversion
	if cv == nil || cv.Strategy == "" {
		return conv
	}
	conv.Strategy = string(cv.Strategy)
	if cv.Webhook != nil {
		conv.ReviewVersions = strings.Join(cv.Webhook.ConversionReviewVersions, ", ")
		if cc := cv.Webhook.ClientConfig; cc != nil {
			conv.Target = admission.TargetText(webhookClientConfig(cc))
			conv.CABundle = admission.Summarize(admission.Hook{ClientConfig: webhookClientConfig(cc)}).CABundle
		}
	}
	return conv
}

// webhookClientConfig converts the CRD's client config to admission's, which
// has the same fields, so one set of lints checks both.
func webhookClientConfig(cc *apiextensionsv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
	out := admissionregistrationv1.WebhookClientConfig{URL: cc.URL, CABundle: cc.CABundle}
	if s := cc.Service; s != nil {
		out.Service = &admissionregistrationv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: s.Path, Port: s.Port}
	}
	return out
}

// Lint codes of CRD findings.
const (
	CodeStoredNotServed  = "stored-not-served"
	CodeSeveralStored    = "several-stored-versions"
	CodeNothingServed    = "nothing-served"
	CodeDeprecated       = "deprecated-version"
	CodeNonStructural    = "non-structural"
	CodeNamesNotAccepted = "names-not-accepted"
	CodeTerminating      = "terminating"
	CodeNoSchema         = "no-schema"
	CodeConversionNoHook = "conversion-no-webhook"
)

// IsDrift tells whether a finding's code is stored-version drift: a stored
// version no longer served, or several stored versions (the home page's
// attention item and the CRD list's lint=drift filter).
func IsDrift(code string) bool { return code == CodeStoredNotServed || code == CodeSeveralStored }

// Lint lists what an admin should know about c at time now (for the
// conversion webhook's CA certificates).
func Lint(c *apiextensionsv1.CustomResourceDefinition, now time.Time) []admission.Finding {
	var out []admission.Finding
	served := map[string]bool{}
	anyServed := false
	for _, v := range c.Spec.Versions {
		served[v.Name] = v.Served
		anyServed = anyServed || v.Served
		if v.Served && v.Deprecated {
			w := c.Spec.Group + "/" + v.Name + " " + c.Spec.Names.Kind + " is deprecated"
			if v.DeprecationWarning != nil {
				w = *v.DeprecationWarning
			}
			out = append(out, admission.Finding{Code: CodeDeprecated, Severity: admission.Info, Title: v.Name + " deprecated",
				Message: "Clients using " + v.Name + " get the warning: " + oneLine(w)})
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			out = append(out, admission.Finding{Code: CodeNoSchema, Severity: admission.Warning, Title: v.Name + " has no schema",
				Message: "Version " + v.Name + " has no openAPIV3Schema: the API server prunes nothing and validates nothing in it."})
		}
	}
	if !anyServed {
		out = append(out, admission.Finding{Code: CodeNothingServed, Severity: admission.Error, Title: "No version served",
			Message: "No version is served, so the API server offers no endpoint for these objects."})
	}
	for _, sv := range c.Status.StoredVersions {
		if !served[sv] {
			out = append(out, admission.Finding{Code: CodeStoredNotServed, Severity: admission.Warning, Title: sv + " stored but not served",
				Message: "Objects may still be stored as " + sv + ", which is no longer served: migrate them (read and write each back) before removing " + sv + " from status.storedVersions and the spec."})
		}
	}
	if len(c.Status.StoredVersions) > 1 {
		out = append(out, admission.Finding{Code: CodeSeveralStored, Severity: admission.Info, Title: "Several stored versions",
			Message: "Objects may exist in etcd as " + strings.Join(c.Status.StoredVersions, ", ") + "; a storage migration lets the older ones be dropped from status.storedVersions."})
	}
	for _, cond := range c.Status.Conditions {
		switch {
		case cond.Type == apiextensionsv1.NonStructuralSchema && cond.Status == apiextensionsv1.ConditionTrue:
			out = append(out, admission.Finding{Code: CodeNonStructural, Severity: admission.Error, Title: "Non-structural schema",
				Message: "The schema is not structural, so pruning, defaulting and CEL rules do not work: " + oneLine(cond.Message)})
		case cond.Type == apiextensionsv1.NamesAccepted && cond.Status == apiextensionsv1.ConditionFalse:
			out = append(out, admission.Finding{Code: CodeNamesNotAccepted, Severity: admission.Error, Title: "Names not accepted",
				Message: "The names conflict with another CRD: " + oneLine(cond.Message)})
		case cond.Type == apiextensionsv1.Terminating && cond.Status == apiextensionsv1.ConditionTrue:
			out = append(out, admission.Finding{Code: CodeTerminating, Severity: admission.Warning, Title: "Terminating",
				Message: "The CRD is being deleted; its objects are being removed: " + oneLine(cond.Message)})
		}
	}
	out = append(out, lintPreserveUnknownFields(c)...)
	out = append(out, lintAcceptedNames(c)...)
	if cv := c.Spec.Conversion; cv != nil && cv.Strategy == apiextensionsv1.WebhookConverter {
		if cv.Webhook == nil || cv.Webhook.ClientConfig == nil {
			out = append(out, admission.Finding{Code: CodeConversionNoHook, Severity: admission.Error, Title: "Conversion webhook not configured",
				Message: "strategy is Webhook but no clientConfig is set: reads in any version but the stored one fail."})
		} else {
			out = append(out, admission.LintClientConfig(webhookClientConfig(cv.Webhook.ClientConfig), c.Annotations, now)...)
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
