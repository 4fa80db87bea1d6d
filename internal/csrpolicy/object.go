package csrpolicy

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CRD is the name of the policies' CustomResourceDefinition
// (deploy/base/csrapprovalpolicies.yaml).
const CRD = "csrapprovalpolicies.clusterdesk.io"

// FromObject reads a CSRApprovalPolicy object. The CRD's schema already
// refuses most malformed objects; what it cannot (a missing field of an
// object written before the schema, a wrong type) is an error here, which
// the caller shows beside the policy.
func FromObject(u *unstructured.Unstructured) (Policy, error) {
	p := Policy{Name: u.GetName(), Generation: u.GetGeneration()}
	var err error
	field := func(path ...string) string {
		if err != nil {
			return ""
		}
		v, _, e := unstructured.NestedString(u.Object, path...)
		if e != nil {
			err = fmt.Errorf("%v: %w", path, e)
		}
		return v
	}
	p.Expression = field("spec", "expression")
	p.Decision = Decision(field("spec", "decision"))
	p.Reason = field("spec", "reason")
	p.Message = field("spec", "message")
	if err != nil {
		return p, err
	}
	p.Signers, _, err = unstructured.NestedStringSlice(u.Object, "spec", "signerNames")
	if err != nil {
		return p, err
	}
	p.SupersedeDuplicates, _, err = unstructured.NestedBool(u.Object, "spec", "supersedeDuplicates")
	if err != nil {
		return p, fmt.Errorf("[spec supersedeDuplicates]: %w", err)
	}
	if p.RateLimit, err = rateLimitOf(u); err != nil {
		return p, err
	}
	p.Requesters, err = requestersOf(u)
	return p, err
}

// rateLimitOf reads spec.rateLimit ({maxApprovals: 3, period: 1h}); nil when
// absent. The values are checked by Compile (RateLimit.check), so a policy
// written before the schema says what is wrong beside it.
func rateLimitOf(u *unstructured.Unstructured) (*RateLimit, error) {
	m, found, err := unstructured.NestedMap(u.Object, "spec", "rateLimit")
	if err != nil {
		return nil, fmt.Errorf("[spec rateLimit]: %w", err)
	}
	if !found {
		return nil, nil
	}
	rl := &RateLimit{}
	// An integer: int64 from the API server, float64 from YAML or JSON
	// decoded without a schema.
	switch n := m["maxApprovals"].(type) {
	case int64:
		rl.MaxApprovals = int(n)
	case float64:
		if n != float64(int(n)) {
			return nil, fmt.Errorf("[spec rateLimit maxApprovals]: %v is not an integer", n)
		}
		rl.MaxApprovals = int(n)
	default:
		return nil, fmt.Errorf("[spec rateLimit maxApprovals]: an integer is required")
	}
	period, found, err := unstructured.NestedString(m, "period")
	if err != nil || !found {
		return nil, fmt.Errorf("[spec rateLimit period]: a duration such as 1h is required")
	}
	if rl.Period, err = time.ParseDuration(period); err != nil {
		return nil, fmt.Errorf("[spec rateLimit period]: %q is not a duration such as 1h or 30m: %w", period, err)
	}
	return rl, nil
}

// requestersOf reads spec.requesters (issue 47, item 2); nil when absent:
// the policy covers every requester, as before the field.
func requestersOf(u *unstructured.Unstructured) (*Requesters, error) {
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "requesters"); !found {
		return nil, nil
	}
	r := &Requesters{}
	for _, f := range []struct {
		name string
		to   *[]string
	}{{"users", &r.Users}, {"groups", &r.Groups}, {"serviceAccounts", &r.ServiceAccounts}} {
		v, _, err := unstructured.NestedStringSlice(u.Object, "spec", "requesters", f.name)
		if err != nil {
			return nil, fmt.Errorf("spec.requesters.%s: %w", f.name, err)
		}
		*f.to = v
	}
	return r, nil
}

// SignersOf reads the signers a policy object names, whatever else in it is
// wrong: a policy that cannot run still says which signers it was written
// for. ok is false when they cannot be read (no list of strings, an empty
// list, a name that is not <domain>/<path> or <domain>/*).
func SignersOf(u *unstructured.Unstructured) (signers []string, ok bool) {
	signers, found, err := unstructured.NestedStringSlice(u.Object, "spec", "signerNames")
	if !found || err != nil || checkSigners(signers) != nil {
		return nil, false
	}
	return signers, true
}
