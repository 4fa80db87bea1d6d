package kube

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestFlowSchemaV1(t *testing.T) {
	in := &flowcontrolv1beta3.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "system-leader-election", ResourceVersion: "42", UID: "u1",
			Annotations: map[string]string{"apf.kubernetes.io/autoupdate-spec": "true"}},
		Spec: flowcontrolv1beta3.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1beta3.PriorityLevelConfigurationReference{Name: "leader-election"},
			MatchingPrecedence:         100,
			DistinguisherMethod:        &flowcontrolv1beta3.FlowDistinguisherMethod{Type: flowcontrolv1beta3.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1beta3.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1beta3.Subject{{Kind: flowcontrolv1beta3.SubjectKindUser, User: &flowcontrolv1beta3.UserSubject{Name: "system:kube-scheduler"}}},
				ResourceRules: []flowcontrolv1beta3.ResourcePolicyRule{{
					Verbs: []string{"get", "update"}, APIGroups: []string{"coordination.k8s.io"},
					Resources: []string{"leases"}, Namespaces: []string{"*"},
				}},
			}},
		},
		Status: flowcontrolv1beta3.FlowSchemaStatus{Conditions: []flowcontrolv1beta3.FlowSchemaCondition{{
			Type: flowcontrolv1beta3.FlowSchemaConditionDangling, Status: flowcontrolv1beta3.ConditionFalse, Reason: "Found",
		}}},
	}
	want := &flowcontrolv1.FlowSchema{
		ObjectMeta: in.ObjectMeta,
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "leader-election"},
			MatchingPrecedence:         100,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "system:kube-scheduler"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"get", "update"}, APIGroups: []string{"coordination.k8s.io"},
					Resources: []string{"leases"}, Namespaces: []string{"*"},
				}},
			}},
		},
		Status: flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{{
			Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found",
		}}},
	}
	got, err := flowSchemaV1(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("flowSchemaV1:\n got %s\nwant %s", dump(got), dump(want))
	}
}

func TestPriorityLevelV1(t *testing.T) {
	in := &flowcontrolv1beta3.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "workload-low"},
		Spec: flowcontrolv1beta3.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1beta3.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1beta3.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: 100,
				LendablePercent:          ptr.To[int32](90),
				LimitResponse: flowcontrolv1beta3.LimitResponse{
					Type:    flowcontrolv1beta3.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1beta3.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50},
				},
			},
		},
	}
	want := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: in.ObjectMeta,
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				// The one schema difference: v1 made the shares a pointer.
				NominalConcurrencyShares: ptr.To[int32](100),
				LendablePercent:          ptr.To[int32](90),
				LimitResponse: flowcontrolv1.LimitResponse{
					Type:    flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50},
				},
			},
		},
	}
	got, err := priorityLevelV1(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("priorityLevelV1:\n got %s\nwant %s", dump(got), dump(want))
	}

	exempt := &flowcontrolv1beta3.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "exempt"},
		Spec: flowcontrolv1beta3.PriorityLevelConfigurationSpec{
			Type:   flowcontrolv1beta3.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1beta3.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](0)},
		},
	}
	got, err = priorityLevelV1(exempt)
	if err != nil || got.Spec.Exempt == nil || got.Spec.Exempt.NominalConcurrencyShares == nil || *got.Spec.Exempt.NominalConcurrencyShares != 0 {
		t.Fatalf("exempt: %+v, %v", got, err)
	}
}

func dump(v any) string {
	out, err := yaml.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(out)
}
