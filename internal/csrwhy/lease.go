package csrwhy

import (
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// The annotations the approver's leader writes on its Lease, so the console
// can say what only the approver knows: that it runs in dry run, and the
// signers the API server refused it (403).
const (
	AnnotationDryRun  = "approver.clusterdesk.io/dry-run"
	AnnotationRefused = "approver.clusterdesk.io/refused-signers" // comma-separated, sorted
)

// FromLease is the approver as its Lease (nil: none) says it.
func FromLease(name string, l *coordinationv1.Lease) Approver {
	a := Approver{Lease: name}
	if l == nil {
		return a
	}
	a.Installed = true
	if l.Spec.HolderIdentity != nil {
		a.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.RenewTime != nil {
		a.RenewTime = l.Spec.RenewTime.Time
	}
	if l.Spec.LeaseDurationSeconds != nil {
		a.LeaseDuration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	a.DryRun = l.Annotations[AnnotationDryRun] == "true"
	if s := l.Annotations[AnnotationRefused]; s != "" {
		a.Refused = map[string]bool{}
		for _, signer := range strings.Split(s, ",") {
			a.Refused[signer] = true
		}
	}
	return a
}
