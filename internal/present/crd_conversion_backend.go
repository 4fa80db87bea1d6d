package present

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// AddConversionBackend puts what a lookup found about the CRD's conversion
// webhook Service on its detail page: a Service line in the Conversion
// section, and its findings there and at the top of the page. A CRD without a
// conversion Service is left as it is.
func AddConversionBackend(p *model.DetailPage, c *apiextensionsv1.CustomResourceDefinition, b admission.Backend) {
	key := crd.ConversionService(c)
	if key == nil {
		return
	}
	fs := findings(crd.LintConversionBackend(c, b))
	for i := range p.Insights {
		in := &p.Insights[i]
		if in.TestID != "conversion" {
			continue
		}
		in.Fields = append(in.Fields, model.RichField{Label: "Service",
			Value: model.Rich{Text: backendText(WebhookBackends{*key: b}, *key)},
			Hint:  "Looked up when this page was opened (a GET of the Service and a LIST of its EndpointSlices)."})
		in.Findings = append(in.Findings, fs...)
		in.Open = in.Open || hasError(fs)
	}
	for _, f := range fs {
		p.Problems = append(p.Problems, model.Banner{Tone: f.Tone, Title: f.Title, Message: f.Message, TestID: "finding-conversion-" + f.Code})
	}
}
