package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// maxReasonLen bounds the free text an approver writes into the condition message.
const maxReasonLen = 1024

// csrActions offers Approve and Deny only where they can succeed: not in
// read-only mode, not on a decided CSR, and only if RBAC lets the user approve
// for this signer. The POST handler enforces all of it again.
func (h *Handlers) csrActions(c echo.Context, name string) []model.Action {
	if h.deps.ReadOnly {
		return nil
	}
	csr, err := h.deps.Cluster.CSR(name)
	if err != nil || present.CSRDecided(csr) {
		return nil
	}
	ctx := c.Request().Context()
	canUpdate, err1 := h.deps.Access.Can(ctx, "update", "certificates.k8s.io", "certificatesigningrequests", "approval", "")
	canSign, err2 := h.deps.Access.Can(ctx, "approve", "certificates.k8s.io", "signers", "", csr.Spec.SignerName)
	if err1 != nil || err2 != nil || !canUpdate || !canSign {
		return nil
	}
	base := "/csrs/" + url.PathEscape(name)
	return []model.Action{
		{Label: "Approve", URL: base + "/approve", Tone: model.ToneOK, TestID: "approve", WithReason: true,
			Confirm: "Approve " + name + "? The signer " + csr.Spec.SignerName + " will issue a certificate."},
		{Label: "Deny", URL: base + "/deny", Tone: model.ToneError, TestID: "deny", WithReason: true,
			Confirm: "Deny " + name + "? A decision cannot be undone."},
	}
}

func (h *Handlers) approveCSR(c echo.Context) error { return h.decideCSR(c, true) }
func (h *Handlers) denyCSR(c echo.Context) error    { return h.decideCSR(c, false) }

// decideCSR writes an Approved or Denied condition through the /approval
// subresource as the signed-in user, then redirects to the CSR with the result
// and any API server warnings.
func (h *Handlers) decideCSR(c echo.Context, approve bool) error {
	name := c.Param("name")
	text := strings.TrimSpace(c.FormValue("message"))
	if len(text) > maxReasonLen {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The message is %d characters long; at most %d are kept in the condition.", len(text), maxReasonLen))
	}
	verb, reason := "Denied", "ClusterdeskDenied"
	if approve {
		verb, reason = "Approved", "ClusterdeskApproved"
	}
	msg := verb + " by " + h.deps.User + " via clusterdesk"
	if text != "" {
		msg += ": " + text
	}
	warnings, err := h.deps.Writer.DecideCSR(c.Request().Context(), name, approve, reason, msg)
	h.deps.Log.Info("write", "who", h.deps.User, "verb", strings.ToLower(verb[:len(verb)-1]), "kind", "CertificateSigningRequest",
		"name", name, "dryRun", false, "ok", err == nil, "err", errString(err))
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
	return redirectSeeOther(c, "/csrs/"+url.PathEscape(name))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
