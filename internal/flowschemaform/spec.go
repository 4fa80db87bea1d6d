package flowschemaform

import (
	"fmt"
	"slices"
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
)

// Spec turns the form into the spec it describes, or local errors
// by field key when it cannot be expressed (a precedence that is not a
// number). Everything else is sent as typed: the API server judges it.
func Spec(f form.Form) (flowcontrolv1.FlowSchemaSpec, map[string][]string) {
	errs := map[string][]string{}
	var spec flowcontrolv1.FlowSchemaSpec
	prec, err := strconv.ParseInt(f.Precedence, 10, 32)
	switch {
	case f.Precedence == "":
		errs[form.FieldPrecedence] = []string{"Give the matching precedence, a whole number from 1 to 10000."}
	case err != nil:
		errs[form.FieldPrecedence] = []string{fmt.Sprintf("%q is not a whole number; the matching precedence is one from 1 to 10000.", f.Precedence)}
	default:
		spec.MatchingPrecedence = int32(prec)
	}
	spec.PriorityLevelConfiguration.Name = form.PriorityLevelName(f)
	if f.Distinguisher != "" {
		spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodType(f.Distinguisher)}
	}
	for _, r := range f.Rules {
		rule := flowcontrolv1.PolicyRulesWithSubjects{}
		for _, s := range r.Subjects {
			rule.Subjects = append(rule.Subjects, subjectOf(s))
		}
		for _, rr := range r.ResourceRules {
			rule.ResourceRules = append(rule.ResourceRules, flowcontrolv1.ResourcePolicyRule{
				Verbs:        slices.Clone(rr.Verbs),
				APIGroups:    form.SplitList(rr.APIGroups, true),
				Resources:    form.SplitList(rr.Resources, false),
				ClusterScope: rr.ClusterScope,
				Namespaces:   form.SplitList(rr.Namespaces, false),
			})
		}
		for _, nr := range r.NonResourceRules {
			rule.NonResourceRules = append(rule.NonResourceRules, flowcontrolv1.NonResourcePolicyRule{
				Verbs:           slices.Clone(nr.Verbs),
				NonResourceURLs: form.SplitList(nr.URLs, false),
			})
		}
		spec.Rules = append(spec.Rules, rule)
	}
	if len(errs) == 0 {
		errs = nil
	}
	return spec, errs
}

func subjectOf(s form.Subject) flowcontrolv1.Subject {
	switch flowcontrolv1.SubjectKind(s.Kind) {
	case flowcontrolv1.SubjectKindGroup:
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: s.Name}}
	case flowcontrolv1.SubjectKindServiceAccount:
		return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: s.Namespace, Name: s.Name}}
	}
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: s.Name}}
}

// FormOf fills the form from an existing FlowSchema, to edit it.
// levels are the priority levels the select offers.
func FormOf(fs *flowcontrolv1.FlowSchema, levels []string) form.Form {
	f := form.Form{
		Name:            fs.Name,
		ResourceVersion: fs.ResourceVersion,
		Precedence:      strconv.Itoa(int(fs.Spec.MatchingPrecedence)),
		PriorityLevel:   fs.Spec.PriorityLevelConfiguration.Name,
	}
	if !slices.Contains(levels, f.PriorityLevel) {
		f.PriorityLevel, f.PriorityTyped = form.PriorityLevelOther, fs.Spec.PriorityLevelConfiguration.Name
	}
	if fs.Spec.DistinguisherMethod != nil {
		f.Distinguisher = string(fs.Spec.DistinguisherMethod.Type)
	}
	for _, r := range fs.Spec.Rules {
		var rule form.Rule
		for _, s := range r.Subjects {
			fsub := form.Subject{Kind: string(s.Kind)}
			switch {
			case s.User != nil:
				fsub.Name = s.User.Name
			case s.Group != nil:
				fsub.Name = s.Group.Name
			case s.ServiceAccount != nil:
				fsub.Namespace, fsub.Name = s.ServiceAccount.Namespace, s.ServiceAccount.Name
			}
			rule.Subjects = append(rule.Subjects, fsub)
		}
		for _, rr := range r.ResourceRules {
			rule.ResourceRules = append(rule.ResourceRules, form.ResourceRule{
				Verbs: slices.Clone(rr.Verbs), APIGroups: form.JoinList(rr.APIGroups, true), Resources: form.JoinList(rr.Resources, false),
				ClusterScope: rr.ClusterScope, Namespaces: form.JoinList(rr.Namespaces, false),
			})
		}
		for _, nr := range r.NonResourceRules {
			rule.NonResourceRules = append(rule.NonResourceRules, form.NonResourceRule{
				Verbs: slices.Clone(nr.Verbs), URLs: form.JoinList(nr.NonResourceURLs, false),
			})
		}
		f.Rules = append(f.Rules, rule)
	}
	return f
}
