// Package decide approves and denies CertificateSigningRequests as the
// signed-in user: one request, a bulk selection, or the confirmed preview of a
// storm group. Every decision is written on the object with the UID the person
// saw (a request replaced since is refused, never decided), one request's
// failure never stops the others, and every attempt is audited. It knows
// nothing of HTTP: the handlers parse the form, call it once and render.
package decide

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// MaxBatch bounds one bulk decision or one step of a group action: more than
// a person can have looked at. With workers writes in flight a batch of 500
// takes about a second on a healthy API server.
const MaxBatch = 500

// workers is how many decisions are in flight at once: enough to finish a page
// of requests in a moment, few enough not to flood the API server's priority
// level for this user.
const workers = 4

// Ref names one CSR as the person saw it: its name and the UID of the object
// shown. Every approve and deny carries one, so that a request deleted and
// created again under the same name is refused rather than decided.
type Ref struct {
	Name string
	UID  types.UID
}

// Writer approves or denies one CSR through its /approval subresource as the
// signed-in user (kube.Writer): one GET and one write, a resourceVersion
// conflict retried from a fresh read, a replaced object answered with a
// *kube.ReplacedError and never retried.
type Writer interface {
	DecideCSR(ctx context.Context, name string, uid types.UID, approve bool, reason, message string) (warnings []string, err error)
}

// Auditor records each decision attempted, refused and failed ones included.
type Auditor interface {
	Decided(ctx context.Context, d Decision)
}

// Decisions is the use case. Its zero Audit records nothing; Log defaults to
// slog.Default.
type Decisions struct {
	Writer   Writer
	Access   Access
	Audit    Auditor
	Log      *slog.Logger
	ReadOnly bool // the console writes nothing: MayDecide allows no signer
}

// Decision is one request's outcome: what was asked, the API server's
// warnings and error, and the CSR as the writer read it and as the API server
// stored it (nil when not reached), for the audit trail.
type Decision struct {
	Ref      Ref
	Approve  bool
	Text     string // the approver's own words, kept in the condition's message
	Warnings []string
	Err      error
	Before   *certificatesv1.CertificateSigningRequest
	After    *certificatesv1.CertificateSigningRequest
}

// Verb is "Approved" or "Denied".
func (d Decision) Verb() string {
	verb, _, _ := Condition("", d.Approve, "")
	return verb
}

// Replaced returns the API server's refusal when the request under the name is
// no longer the one reviewed (nothing was written).
func (d Decision) Replaced() (*kube.ReplacedError, bool) {
	var r *kube.ReplacedError
	ok := errors.As(d.Err, &r)
	return r, ok
}

// Condition returns the verb ("Approved", "Denied"), the condition's reason
// and its message, which names the user and keeps their text.
func Condition(user string, approve bool, text string) (verb, reason, message string) {
	verb, reason = "Denied", "ClusterdeskDenied"
	if approve {
		verb, reason = "Approved", "ClusterdeskApproved"
	}
	message = verb + " by " + user + " via clusterdesk"
	if text != "" {
		message += ": " + text
	}
	return verb, reason, message
}

// One approves or denies the request ref as user and audits the attempt. A
// request replaced since it was viewed comes back with a *kube.ReplacedError
// (Decision.Replaced) holding the live object now under the name.
func (s Decisions) One(ctx context.Context, user string, ref Ref, approve bool, text string) Decision {
	d := s.write(ctx, job{ref: ref, approve: approve, user: user, text: text})
	s.audit(ctx, d)
	return d
}

// Batch approves (approve) or denies every ref as user, each through its own
// write on the object with that UID, a few at a time, and returns the outcomes
// in the order given, each audited. It refuses more than MaxBatch refs with an
// *InvalidError, before writing anything.
func (s Decisions) Batch(ctx context.Context, user string, refs []Ref, approve bool, text string) ([]Decision, error) {
	if len(refs) > MaxBatch {
		return nil, invalidf("%d requests were selected; decide at most %d at once.", len(refs), MaxBatch)
	}
	jobs := make([]job, len(refs))
	for i, ref := range refs {
		jobs[i] = job{ref: ref, approve: approve, user: user, text: text}
	}
	return s.all(ctx, jobs), nil
}

// job is one decision to write.
type job struct {
	ref     Ref
	approve bool
	user    string
	text    string
}

// all decides every job with a few workers, then audits the outcomes in order
// (the audit trail reads as the person chose, whatever finished first).
func (s Decisions) all(ctx context.Context, jobs []job) []Decision {
	out := make([]Decision, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				out[i] = s.write(ctx, jobs[i])
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, d := range out {
		s.audit(ctx, d)
	}
	return out
}

// write makes one decision, capturing the CSR before and after for the audit.
func (s Decisions) write(ctx context.Context, j job) Decision {
	_, reason, msg := Condition(j.user, j.approve, j.text)
	cctx, capture := kube.WithCSRCapture(ctx)
	warnings, err := s.Writer.DecideCSR(cctx, j.ref.Name, j.ref.UID, j.approve, reason, msg)
	before, after := capture.Versions()
	return Decision{Ref: j.ref, Approve: j.approve, Text: j.text, Warnings: warnings, Err: err, Before: before, After: after}
}

func (s Decisions) audit(ctx context.Context, d Decision) {
	if s.Audit != nil {
		s.Audit.Decided(ctx, d)
	}
}

func (s Decisions) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
