package flowschemaform

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
)

// The form package spells the API's subject kinds and distinguisher methods
// itself (it imports only the standard library, for the templates); they
// must stay the API's.
func TestFormSpellsTheAPIsConstants(t *testing.T) {
	for got, want := range map[string]string{
		form.KindUser:           string(flowcontrolv1.SubjectKindUser),
		form.KindGroup:          string(flowcontrolv1.SubjectKindGroup),
		form.KindServiceAccount: string(flowcontrolv1.SubjectKindServiceAccount),
		form.ByUser:             string(flowcontrolv1.FlowDistinguisherMethodByUserType),
		form.ByNamespace:        string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType),
	} {
		if got != want {
			t.Errorf("form spells %q, the API %q", got, want)
		}
	}
}
