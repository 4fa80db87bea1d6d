package csrs

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/decide"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

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
	if _, err := h.d.Queue.Decode(obj.Spec.Request); err != nil {
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

// decideCSR approves or denies, as the signed-in user, the CSR whose UID the
// form carries (decide.Decisions.One), then redirects to the CSR with the
// result and any API server warnings, once the cache shows the decision
// (decisionSeen). When the name now holds another request,
// it answers 409 with that request shown.
func (h *Handlers) decideCSR(c echo.Context, approve bool) error {
	name := c.Param("name")
	uid, err := ParseUID(c.FormValue("uid"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	text, err := ParseReason(c.FormValue("message"))
	if err != nil {
		return err
	}
	d := h.decisions(c).One(c.Request().Context(), h.user(c), decide.Ref{Name: name, UID: uid}, approve, text)
	if replaced, ok := d.Replaced(); ok {
		return h.csrReplaced(c, replaced)
	}
	if d.Err != nil {
		return d.Err
	}
	decisionSeen(c.Request().Context(), h.d.Cluster.CSR, d.After, 10*time.Millisecond, decisionWait)
	verb := d.Verb()
	banners := []model.Banner{{Tone: model.ToneOK, Title: verb, Message: name + " was " + strings.ToLower(verb) + ".", TestID: "toast-result"}}
	for _, w := range d.Warnings {
		banners = append(banners, model.Banner{Tone: model.ToneWarning, Title: "Warning from the API server", Message: w, TestID: "toast-warning"})
	}
	if err := h.d.Flash.Set(c, banners); err != nil {
		return errors.Join(errors.New("the decision was written, but its confirmation could not be shown"), err)
	}
	return page.RedirectSeeOther(c, urls.CSR(name))
}

// decisions is the CSR decision use case as the signed-in user of c, auditing
// each decision with who made it (Deps.Audit). The queue's bulk and group
// decisions and this page's single ones are the same use case.
func (h *Handlers) decisions(c echo.Context) decide.Decisions {
	return decide.Decisions{Writer: h.d.Writer, Access: h.d.Access, Audit: h.d.Audit.For(c.Request().Context()), Log: h.d.Log, ReadOnly: h.d.ReadOnly}
}

// csrMayDecide reports whether the signed-in user may decide CSRs of a signer
// (decide.Decisions.MayDecide); nil when they may decide nothing.
func (h *Handlers) csrMayDecide(c echo.Context) func(signer string) bool {
	return h.decisions(c).MayDecide(c.Request().Context())
}
