package testfixtures

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FlowSchema is a FlowSchema named name at precedence that sends what its
// rules match to the priority level named level, distinguishing flows by dm
// (nil: no distinction).
func FlowSchema(name string, precedence int32, level string, dm *flowcontrolv1.FlowDistinguisherMethod, rules ...flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.FlowSchemaSpec{
			MatchingPrecedence:         precedence,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			DistinguisherMethod:        dm,
			Rules:                      rules,
		},
	}
}

// Rule is one of a FlowSchema's rules: who (subjects) does what (resource
// rules rr, non-resource rules nr).
func Rule(subjects []flowcontrolv1.Subject, rr []flowcontrolv1.ResourcePolicyRule, nr ...flowcontrolv1.NonResourcePolicyRule) flowcontrolv1.PolicyRulesWithSubjects {
	return flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects, ResourceRules: rr, NonResourceRules: nr}
}

// Subjects is ss as a rule's subject list.
func Subjects(ss ...flowcontrolv1.Subject) []flowcontrolv1.Subject { return ss }

// User is the subject "user name".
func User(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: name}}
}

// Group is the subject "group name".
func Group(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: name}}
}

// ServiceAccount is the subject "service account ns/name" (either may be "*").
func ServiceAccount(ns, name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: name}}
}

// Resources is the single resource rule ResourceRule describes, as a rule's list.
func Resources(verbs, groups, resources, namespaces []string, cluster bool) []flowcontrolv1.ResourcePolicyRule {
	return []flowcontrolv1.ResourcePolicyRule{ResourceRule(verbs, groups, resources, namespaces, cluster)}
}

// ResourceRule matches verbs on resources of the API groups in namespaces,
// and cluster-scoped requests when cluster is set.
func ResourceRule(verbs, groups, resources, namespaces []string, cluster bool) flowcontrolv1.ResourcePolicyRule {
	return flowcontrolv1.ResourcePolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, Namespaces: namespaces, ClusterScope: cluster}
}

// AnyResource matches every verb on every resource in namespaces (and
// cluster-scoped requests when cluster is set).
func AnyResource(namespaces []string, cluster bool) []flowcontrolv1.ResourcePolicyRule {
	return Resources([]string{"*"}, []string{"*"}, []string{"*"}, namespaces, cluster)
}

// NonResourceRule matches verbs on the URLs (non-resource requests).
func NonResourceRule(verbs []string, urls ...string) flowcontrolv1.NonResourcePolicyRule {
	return flowcontrolv1.NonResourcePolicyRule{Verbs: verbs, NonResourceURLs: urls}
}
