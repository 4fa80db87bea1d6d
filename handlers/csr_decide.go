package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// maxReasonLen bounds the free text an approver writes into the condition message.
const maxReasonLen = 1024

// csrActions offers Approve and Deny for the CSR the page shows, only where
// they can succeed: not in read-only mode, not on a decided CSR, and only if
// RBAC lets the user approve for this signer. Both carry the CSR's UID, so they
// decide this object and no other under the same name. The POST handler and
// the API server enforce all of it again.
func (h *Handlers) csrActions(c echo.Context, obj *certificatesv1.CertificateSigningRequest) []model.Action {
	if obj == nil || present.CSRDecided(obj) {
		return nil
	}
	// The API server validates spec.request on every write, so a request that
	// does not decode can be neither approved nor denied.
	if _, err := csrDecodes.Decode(obj.Spec.Request); err != nil {
		return nil
	}
	mayDecide := h.csrMayDecide(c)
	if mayDecide == nil || !mayDecide(obj.Spec.SignerName) {
		return nil
	}
	name := obj.Name
	return []model.Action{
		{Label: "Approve", URL: urls.CSRApprove(name), Tone: model.ToneOK, TestID: "approve", WithReason: true, UID: string(obj.UID),
			Confirm: "Approve " + name + "? The signer " + obj.Spec.SignerName + " will issue a certificate."},
		{Label: "Deny", URL: urls.CSRDeny(name), Tone: model.ToneError, TestID: "deny", WithReason: true, UID: string(obj.UID),
			Confirm: "Deny " + name + "? A decision cannot be undone."},
	}
}

func (h *Handlers) approveCSR(c echo.Context) error { return h.decideCSR(c, true) }
func (h *Handlers) denyCSR(c echo.Context) error    { return h.decideCSR(c, false) }

// decideCSR writes an Approved or Denied condition through the /approval
// subresource as the signed-in user, on the CSR whose UID the form carries,
// then redirects to the CSR with the result and any API server warnings. When
// the name now holds another request, it answers 409 with that request shown.
func (h *Handlers) decideCSR(c echo.Context, approve bool) error {
	name := c.Param("name")
	uid, err := parseCSRUID(c.FormValue("uid"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	text := strings.TrimSpace(c.FormValue("message"))
	if len(text) > maxReasonLen {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The message is %d characters long; at most %d are kept in the condition.", len(text), maxReasonLen))
	}
	verb, reason, msg := h.csrDecision(h.user(c), approve, text)
	ctx, capture := kube.WithCSRCapture(c.Request().Context())
	warnings, err := h.deps.Writer.DecideCSR(ctx, name, uid, approve, reason, msg)
	h.audit(c, csrRecord(verb, name, text, capture, err))
	var replaced *kube.ReplacedError
	if errors.As(err, &replaced) {
		return h.csrReplaced(c, replaced)
	}
	if err != nil {
		return err
	}
	banners := []model.Banner{{Tone: model.ToneOK, Title: verb, Message: name + " was " + strings.ToLower(verb) + ".", TestID: "toast-result"}}
	for _, w := range warnings {
		banners = append(banners, model.Banner{Tone: model.ToneWarning, Title: "Warning from the API server", Message: w, TestID: "toast-warning"})
	}
	if err := setFlash(c, h.deps.Sessions, banners); err != nil {
		return errors.Join(errors.New("the decision was written, but its confirmation could not be shown"), err)
	}
	return redirectSeeOther(c, urls.CSR(name))
}

// csrDecision returns the verb ("Approved", "Denied"), the condition's reason
// and its message, which names the user and keeps their text.
func (h *Handlers) csrDecision(user string, approve bool, text string) (verb, reason, message string) {
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

// csrMayDecide returns a function reporting whether the signed-in user may
// approve and deny CSRs of a signer (update on certificatesigningrequests/approval
// and approve on signers/<signer> or signers/<domain>/*, by
// SelfSubjectAccessReview, as csr.SignerAuthzNames explains), remembering
// answers for this request. It returns nil when the user may decide nothing:
// read-only mode, or no right to update approvals at all. An access review
// that fails hides the buttons; the server still decides on a POST.
func (h *Handlers) csrMayDecide(c echo.Context) func(signer string) bool {
	if h.deps.ReadOnly {
		return nil
	}
	ctx := c.Request().Context()
	canUpdate, err := h.deps.Access.Can(ctx, "update", "certificates.k8s.io", "certificatesigningrequests", "approval", "")
	if err != nil {
		h.deps.Log.Warn("access review failed", "check", "update certificatesigningrequests/approval", "err", err)
		return nil
	}
	if !canUpdate {
		return nil
	}
	answers := map[string]bool{} // by resource name: signers of one domain share the wildcard's
	may := func(resourceName string) bool {
		if ok, seen := answers[resourceName]; seen {
			return ok
		}
		ok, err := h.deps.Access.Can(ctx, "approve", "certificates.k8s.io", "signers", "", resourceName)
		if err != nil {
			h.deps.Log.Warn("access review failed", "check", "approve signers", "signer", resourceName, "err", err)
		}
		answers[resourceName] = ok && err == nil
		return answers[resourceName]
	}
	return func(signer string) bool {
		return slices.ContainsFunc(csr.SignerAuthzNames(signer), may)
	}
}

// csrRecord is the audit record of one decision, with the CSR as DecideCSR
// read it and as the API server stored it.
func csrRecord(verb, name, text string, capture *kube.CSRCapture, err error) writeRecord {
	rec := writeRecord{Verb: strings.ToLower(verb[:len(verb)-1]), Kind: "CertificateSigningRequest", Name: name, Err: err, Reason: text}
	before, after := capture.Versions()
	if before != nil {
		rec.From, rec.Before = csrObject(before), before.ResourceVersion
	}
	if after != nil {
		rec.To, rec.After = csrObject(after), after.ResourceVersion
	}
	return rec
}

// csrObject gives a typed CSR its apiVersion and kind for the audit diff.
func csrObject(csr *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	csr = csr.DeepCopy()
	csr.APIVersion, csr.Kind = certificatesv1.SchemeGroupVersion.String(), "CertificateSigningRequest"
	return csr
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
