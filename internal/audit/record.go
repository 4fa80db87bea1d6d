// Package audit records every write made through clusterdesk (dry runs, denials
// and failures included): who, when, verb, object, the approver's reason,
// resourceVersion before and after, the result and the diff. A Recorder writes
// each Record as one JSON line and as a Kubernetes Event on the object. Nothing
// here talks HTTP or renders pages; the Event is written through an EventWriter
// that internal/kube implements.
package audit

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The results of a write.
const (
	ResultOK     = "ok"     // the API server accepted it (for a dry run: would accept it)
	ResultDenied = "denied" // refused for authorization (403) or by the read-only guard
	ResultFailed = "failed" // any other refusal or error (conflict, invalid, unreachable)
)

// Record is one write made through clusterdesk. Its JSON form is the audit line.
// It never holds credentials: no tokens, cookies or CSRF tokens are passed in,
// and free text (the approver's reason, error messages) is scrubbed of anything
// that looks like a bearer token.
type Record struct {
	// ID is random, set by the Recorder: it names the record in the ledger
	// (internal/ledger, SourceConsole), so a record stored twice is stored once.
	ID         string    `json:"id"`
	Time       time.Time `json:"time"`
	User       string    `json:"user"`
	Groups     []string  `json:"groups,omitempty"`
	Verb       string    `json:"verb"` // create, update, delete, approve, deny
	APIVersion string    `json:"apiVersion,omitempty"`
	Kind       string    `json:"kind"` // the API kind, "FlowSchema"
	// APIGroup and Resource name the object's type as the API server's
	// audit events do (ObjectReference): "" is the core group. They, not
	// Kind, say which of the console's kinds a record is about (the ledger,
	// the activity log): a kind's name is anyone's, a CRD of any group may
	// call its kind CertificateSigningRequest.
	APIGroup  string `json:"apiGroup"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"` // a namespaced custom resource's
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Reason    string `json:"reason,omitempty"` // the approver's text on a CSR decision
	// Signer is a CSR's spec.signerName: the ledger's per-signer view lists
	// the console's writes of the signer's requests by it.
	Signer   string `json:"signer,omitempty"`
	RVBefore string `json:"resourceVersionBefore,omitempty"`
	RVAfter  string `json:"resourceVersionAfter,omitempty"`
	DryRun   bool   `json:"dryRun"`
	// Propagation is a deletion's propagationPolicy (Background, Foreground,
	// Orphan) as the console sent it; empty when it sent none.
	Propagation string `json:"propagationPolicy,omitempty"`
	Result      string `json:"result"`           // ResultOK, ResultDenied or ResultFailed
	Status      int    `json:"status,omitempty"` // the API server's HTTP status of a refusal
	// ErrorReason is the API server's machine-readable reason: Forbidden, Conflict, Invalid…
	ErrorReason   string `json:"errorReason,omitempty"`
	Error         string `json:"error,omitempty"`
	Diff          string `json:"diff,omitempty"` // unified diff of the object's YAML before → after
	DiffTruncated bool   `json:"diffTruncated,omitempty"`
}

// Finish sets the result fields from the write's error (nil for success).
func (r *Record) Finish(err error) {
	r.Result, r.Status, r.ErrorReason, r.Error = Outcome(err)
}

// Outcome classifies a write's error: the result, the HTTP status and API
// reason of a refusal, and its message.
func Outcome(err error) (result string, status int, reason, message string) {
	if err == nil {
		return ResultOK, 0, "", ""
	}
	result, message = ResultFailed, err.Error()
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		status, reason = int(st.Status().Code), string(st.Status().Reason)
		if st.Status().Message != "" {
			message = st.Status().Message
		}
	}
	if apierrors.IsForbidden(err) || status == 403 {
		result = ResultDenied
	}
	return result, status, reason, message
}

// SetDiff stores the unified diff between two renderings of the object.
func (r *Record) SetDiff(before, after string) {
	r.Diff, r.DiffTruncated = Diff(before, after)
}
