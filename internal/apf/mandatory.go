package apf

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The apiserver's built-in copies of the mandatory objects, used when the
// cluster lacks them. They transcribe MandatoryFlowSchemaExempt,
// MandatoryFlowSchemaCatchAll and the two mandatory priority levels of
// k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go (v0.36.3);
// importing that package would pull the whole apiserver into the console.
var (
	everything = []flowcontrolv1.PolicyRulesWithSubjects{{
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
			Verbs:        []string{flowcontrolv1.VerbAll},
			APIGroups:    []string{flowcontrolv1.APIGroupAll},
			Resources:    []string{flowcontrolv1.ResourceAll},
			Namespaces:   []string{flowcontrolv1.NamespaceEvery},
			ClusterScope: true,
		}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{
			Verbs:           []string{flowcontrolv1.VerbAll},
			NonResourceURLs: []string{flowcontrolv1.NonResourceAll},
		}},
	}}

	mandatoryExemptFS = &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.FlowSchemaNameExempt},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: flowcontrolv1.PriorityLevelConfigurationNameExempt},
			MatchingPrecedence:         1,
			Rules:                      withSubjects(everything, groupSubject("system:masters")),
		},
	}
	mandatoryCatchAllFS = &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.FlowSchemaNameCatchAll},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: flowcontrolv1.PriorityLevelConfigurationNameCatchAll},
			MatchingPrecedence:         10000,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules:                      withSubjects(everything, groupSubject(GroupUnauthenticated), groupSubject(GroupAuthenticated)),
		},
	}
	mandatoryExemptPL = &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.PriorityLevelConfigurationNameExempt},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To(int32(0)),
				LendablePercent:          ptr.To(int32(0)),
			},
		},
	}
	mandatoryCatchAllPL = &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.PriorityLevelConfigurationNameCatchAll},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To(int32(5)),
				LendablePercent:          ptr.To(int32(0)),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
)

func groupSubject(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: name}}
}

func withSubjects(rules []flowcontrolv1.PolicyRulesWithSubjects, subjects ...flowcontrolv1.Subject) []flowcontrolv1.PolicyRulesWithSubjects {
	out := make([]flowcontrolv1.PolicyRulesWithSubjects, len(rules))
	for i, r := range rules {
		r.Subjects = subjects
		out[i] = r
	}
	return out
}
