package kinds

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var (
	admissionPolicies = cachedAs[*admissionregistrationv1.ValidatingAdmissionPolicy](kube.AdmissionPolicies)
	policyBindings    = cachedAs[*admissionregistrationv1.ValidatingAdmissionPolicyBinding](kube.AdmissionPolicyBindings)
)

// policyDetail shows a ValidatingAdmissionPolicy with the bindings that
// reference it. The bindings are a courtesy: if they cannot be read
// (forbidden, syncing) the policy still shows, and says so.
func policyDetail(c ports.Cluster, p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) model.DetailPage {
	all, err := policyBindings.list(c)
	if err != nil {
		all = nil
	} else if all == nil {
		all = []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	}
	return present.PolicyDetail(p, all, now)
}

// bindingDetail shows a ValidatingAdmissionPolicyBinding with what the cache
// says of its policy.
func bindingDetail(c ports.Cluster, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) model.DetailPage {
	p, err := admissionPolicies.get(c, b.Spec.PolicyName)
	lookup := present.PolicyLookup{Policy: p, Known: err == nil || apierrors.IsNotFound(err)}
	if err != nil {
		lookup.Policy = nil
	}
	return present.BindingDetail(b, lookup, now)
}
