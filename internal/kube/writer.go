package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// Default reasons DecideCSR records when the caller gives none.
const (
	ReasonApproved = "ClusterdeskApproved"
	ReasonDenied   = "ClusterdeskDenied"
	// ReasonPolicy is the reason of a decision `clusterdesk approver` made
	// for a CSR approval policy (internal/approver), whose message names it.
	ReasonPolicy = "ClusterdeskPolicy"
)

// Writer sends writes to the API server as one identity (the signed-in user's) and
// returns the API server's Warning headers of each call. It is safe for concurrent use.
type Writer struct {
	client kubernetes.Interface
}

// NewWriter returns a Writer for the identity in cfg. It does no network I/O.
func NewWriter(cfg *rest.Config) (*Writer, error) {
	c := clientConfig(cfg)
	// One client serves concurrent calls, so warnings are routed by request context
	// to the call that caused them rather than collected on the client.
	c.WarningHandler = nil
	c.WarningHandlerWithContext = warningCollector{}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("writer client: %w", err)
	}
	return &Writer{client: cs}, nil
}

// DecideCSR approves (approve=true) or denies the CSR name through its /approval
// subresource, adding an Approved or Denied condition with reason (ReasonApproved or
// ReasonDenied if empty) and message. uid is the UID of the CSR as the person saw it:
// the write carries it, so the API server refuses it when the live object under name
// is another one, and DecideCSR answers with a *ReplacedError holding the live object.
// It reads the live object, not the cache, and refuses with a Conflict error when the
// CSR is already approved or denied: those conditions are permanent and mutually
// exclusive. A write conflict (someone else updated the CSR meanwhile) is retried from
// a fresh read, so a concurrent decision is reported as "already decided"; a refused
// UID is never retried. It returns the API server's warnings, also on error.
func (w *Writer) DecideCSR(ctx context.Context, name string, uid types.UID, approve bool, reason, message string) ([]string, error) {
	if uid == "" {
		return nil, fmt.Errorf("deciding %q: the UID of the request as reviewed is missing", name)
	}
	ctx, warnings := withWarnings(ctx)
	cond := certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue,
		Reason: ReasonDenied, Message: message,
	}
	if approve {
		cond.Type, cond.Reason = certificatesv1.CertificateApproved, ReasonApproved
	}
	if reason != "" {
		cond.Reason = reason
	}

	csrs := w.client.CertificatesV1().CertificateSigningRequests()
	// Only a resourceVersion conflict of our own write is worth another read:
	// "already decided" is final, and so is a replaced object (UIDs are never reused).
	wrote := false
	retryable := func(err error) bool {
		var replaced *ReplacedError
		return wrote && apierrors.IsConflict(err) && !errors.As(err, &replaced)
	}
	err := retry.OnError(retry.DefaultRetry, retryable, func() error {
		wrote = false
		csr, err := csrs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		captureCSR(ctx, csr, false)
		live := csr.DeepCopy()
		// A decided CSR is refused here only if it is the one reviewed; another
		// object under the name is the API server's to refuse, below.
		if decided := csrDecision(csr); decided != "" && csr.UID == uid {
			return apierrors.NewConflict(
				schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}, name,
				fmt.Errorf("it is already %s; approval and denial are permanent", decided))
		}
		cond.LastUpdateTime = metav1.Now()
		csr.Status.Conditions = append(csr.Status.Conditions, cond)
		// The UID reviewed, not the one just read, is the write's precondition:
		// the API server checks it atomically with the write, where a check of
		// the read here would leave a window for a delete and re-create.
		// Upstream: staging/src/k8s.io/apiserver/pkg/registry/rest/update.go
		// (defaultUpdatedObjectInfo.Preconditions takes metadata.uid of the body)
		// and staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go
		// (Store.Update passes it to GuaranteedUpdate as storage.Preconditions;
		// a mismatch is answered 409 Conflict through storeerr.InterpretUpdateError).
		csr.UID = uid
		wrote = true
		stored, err := csrs.UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
		if err == nil {
			captureCSR(ctx, stored, true)
			return nil
		}
		// The Conflict's message is not a contract; the UIDs are. When the object
		// just read is another one, the refusal is the UID precondition. When it is
		// the one reviewed, the conflict is a resourceVersion race and is retried;
		// a replacement in between is then met by the next read and write.
		if apierrors.IsConflict(err) && live.UID != uid {
			return &ReplacedError{Name: name, Seen: uid, Current: live, Err: err}
		}
		return err
	})
	return warnings.list(), err
}

// csrDecision returns "approved" or "denied" if the CSR carries that condition, else "".
func csrDecision(csr *certificatesv1.CertificateSigningRequest) string {
	for _, c := range csr.Status.Conditions {
		// The API server accepts only Status True for these two types.
		switch c.Type {
		case certificatesv1.CertificateApproved:
			return "approved"
		case certificatesv1.CertificateDenied:
			return "denied"
		}
	}
	return ""
}

// warnings collects the Warning headers of the requests made with one context.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

type warningsKey struct{}

// withWarnings returns a context whose requests' warnings are collected in the result.
func withWarnings(ctx context.Context) (context.Context, *warnings) {
	w := &warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

// warningCollector is the client's warning handler: it files each warning with the
// call whose context asked for it.
type warningCollector struct{}

func (warningCollector) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, message string) {
	// Code 299 is the only one the API server uses; others come from proxies, if at all.
	w, ok := ctx.Value(warningsKey{}).(*warnings)
	if code != 299 || message == "" || !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// A retried call would otherwise report the same warning once per attempt.
	if !slices.Contains(w.msgs, message) {
		w.msgs = append(w.msgs, message)
	}
}
