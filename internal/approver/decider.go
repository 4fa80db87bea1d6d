package approver

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// FieldManager names the approver in the requests' managedFields.
const FieldManager = "clusterdesk-approver"

// Decider writes one decision.
type Decider interface {
	// Decide adds the verdict's condition to c, the request as the cache
	// holds it, and returns the request as stored.
	Decide(ctx context.Context, c *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict) (*certificatesv1.CertificateSigningRequest, error)
}

// Condition is the condition the approver adds for a policy's verdict. The
// reason is the approver's (kube.ReasonPolicy), so "who approves" tells the
// approver's decisions from people's; the message names the policy's
// version, so the agreement page, the ledger and a person reading the request
// can tell which rule, as it was written then (csrpolicy.DecisionMessage:
// name, generation, the expression's hash).
func Condition(v csrpolicy.Verdict) certificatesv1.CertificateSigningRequestCondition {
	t := certificatesv1.CertificateApproved
	if v.Decision == csrpolicy.Deny {
		t = certificatesv1.CertificateDenied
	}
	msg := csrpolicy.DecisionMessage(v.Version, v.Decision, v.Message)
	reason := kube.ReasonPolicy
	if v.Decision == csrpolicy.Deny && v.Reason == csrpolicy.ReasonSuperseded {
		// An older duplicate of a request the policy approved (SupersedeDuplicates).
		reason = csrpolicy.ReasonSuperseded
	}
	return certificatesv1.CertificateSigningRequestCondition{
		Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg,
		LastUpdateTime: metav1.Now(),
	}
}

// APIDecider decides through the /approval subresource.
type APIDecider struct {
	Client kubernetes.Interface
	// DryRun sends each decision as a dry run (dryRun=All): the API server
	// checks it, authorization and the signer's `approve` included, and
	// stores nothing.
	DryRun bool
}

// Decide sends c with its resourceVersion, as the cache read it: were the
// request changed since (decided by a person or another approver), the API
// server answers 409 Conflict and nothing is written. That precondition,
// checked by the API server atomically with the write, is what makes a
// decision happen once; a check of the cache here could not.
//
// It is the typed client's UpdateApproval without client-go's own retries:
// those would hold the worker through up to ten of the API server's
// Retry-After waits on a 429; the controller instead queues that one request
// again after its Retry-After (Throttled) and goes on with the others.
func (d APIDecider) Decide(ctx context.Context, c *certificatesv1.CertificateSigningRequest, v csrpolicy.Verdict) (*certificatesv1.CertificateSigningRequest, error) {
	c = c.DeepCopy()
	c.Status.Conditions = append(c.Status.Conditions, Condition(v))
	opts := metav1.UpdateOptions{FieldManager: FieldManager}
	if d.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out := &certificatesv1.CertificateSigningRequest{}
	err := d.Client.CertificatesV1().RESTClient().Put().
		Resource("certificatesigningrequests").Name(c.Name).SubResource("approval").
		VersionedParams(&opts, scheme.ParameterCodec).Body(c).MaxRetries(0).
		Do(ctx).Into(out)
	return out, err
}
