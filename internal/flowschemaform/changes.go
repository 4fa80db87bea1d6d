package flowschemaform

import (
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
)

// serverChanges words, by form field key, the fields (changed:
// apf.StoredDifferently) where the server would store something other than
// what was typed, got being the spec of its dry run's answer. The API server
// defaults a matching precedence of 0 to 1000 (SetDefaults_FlowSchemaSpec,
// in v1 and v1beta3) rather than refusing it, so this is how a 0 is caught
// before it is stored.
func serverChanges(sent, got flowcontrolv1.FlowSchemaSpec, changed []string) map[string][]string {
	out := map[string][]string{}
	for _, field := range changed {
		switch field {
		case apf.SpecPrecedence:
			msg := "The API server would store " + strconv.Itoa(int(got.MatchingPrecedence)) + ", not " + strconv.Itoa(int(sent.MatchingPrecedence)) + "."
			if sent.MatchingPrecedence == 0 {
				msg += " It takes 0 as “not set” and applies its default: give a value from 1 to 10000."
			}
			out[form.FieldPrecedence] = append(out[form.FieldPrecedence], msg)
		case apf.SpecPriorityLevel:
			out[form.FieldPriorityLevel] = append(out[form.FieldPriorityLevel], "The API server would store "+got.PriorityLevelConfiguration.Name+".")
		case apf.SpecDistinguisher:
			out[form.FieldDistinguisher] = append(out[form.FieldDistinguisher], "The API server would store another distinguisher; see the preview.")
		case apf.SpecRules:
			out[form.FieldRules] = append(out[form.FieldRules], "The API server would store the rules differently; see the preview.")
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
