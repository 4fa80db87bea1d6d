package csrs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/issue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrIssueForm offers the upload of an externally issued certificate where
// one can be written: an Issuer is wired, the console is not read-only, the
// CSR is an approved custom signer's request without a certificate
// (issue.Eligible), and RBAC lets the user sign for its signer. The POST
// handler and the API server enforce all of it again. The form is bound to the
// object and version shown (UID, resourceVersion).
func (h *Handlers) csrIssueForm(c echo.Context, obj *certificatesv1.CertificateSigningRequest) *model.CSRIssueForm {
	if h.d.Issuer == nil || h.d.ReadOnly || obj == nil || issue.Eligible(obj) != nil {
		return nil
	}
	if !issue.MaySign(c.Request().Context(), h.d.Access, obj.Spec.SignerName) {
		return nil
	}
	return &model.CSRIssueForm{
		Action: urls.CSRIssue(obj.Name), Signer: obj.Spec.SignerName,
		UID: string(obj.UID), ResourceVersion: obj.ResourceVersion,
		MaxChainBytes: issue.MaxChainBytes, MaxBundleBytes: issue.MaxBundleBytes,
	}
}

// issuer is the upload use case as the signed-in user of c, auditing each
// attempt with who made it (Deps.Audit).
func (h *Handlers) issuer(c echo.Context) issue.Issuer {
	return issue.Issuer{Writer: h.d.Issuer, Audit: h.d.Audit.For(c.Request().Context()), ReadOnly: h.d.ReadOnly}
}

// issueCSR writes, as the signed-in user, the certificate uploaded for the
// CSR (POST /csrs/:name/issue; a file or pasted PEM, optionally a CA bundle)
// and redirects to the CSR with the result and any warnings. A refused upload
// shows the CSR's page again with the reason beside the form, the text pasted
// kept, and nothing written.
func (h *Handlers) issueCSR(c echo.Context) error {
	name := c.Param("name")
	if h.d.Issuer == nil {
		return echo.NewHTTPError(http.StatusNotFound, "This console does not write certificates.")
	}
	_, obj, err := h.csrShown(c, name)
	if err != nil {
		return err
	}
	uid, err := ParseUID(c.FormValue("uid"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, strings.Replace(err.Error(), "decision", "upload", 1))
	}
	up, err := readIssueUpload(c)
	if err != nil {
		return err
	}
	ref := issue.Ref{Name: name, UID: uid, ResourceVersion: strings.TrimSpace(c.FormValue("resourceVersion"))}
	o := h.issuer(c).Upload(c.Request().Context(), ref, up)
	if o.Err != nil {
		return h.issueRefused(c, obj, up, o.Err)
	}
	h.awaitIssued(c.Request().Context(), name, o.After)
	banners := []model.Banner{{Tone: model.ToneOK, Title: "Certificate written",
		Message: "The certificate was written to " + name + "'s status.certificate.", TestID: "toast-result"}}
	for _, w := range o.Warnings {
		banners = append(banners, model.Banner{Tone: model.ToneWarning, Title: "Accepted with a warning", Message: w, TestID: "toast-warning"})
	}
	for _, w := range o.ServerWarnings {
		banners = append(banners, model.Banner{Tone: model.ToneWarning, Title: "Warning from the API server", Message: w, TestID: "toast-warning"})
	}
	if err := h.d.Flash.Set(c, banners); err != nil {
		return errors.Join(errors.New("the certificate was written, but its confirmation could not be shown"), err)
	}
	return page.RedirectSeeOther(c, urls.CSR(name))
}

// issueRefused shows the CSR's page again with why the upload was refused,
// under the status that says it: 422 for an upload that does not fit the
// request, 409 for a request that cannot take one (or changed), the API
// server's own status (403 without sign rights) for its refusal.
func (h *Handlers) issueRefused(c echo.Context, obj *certificatesv1.CertificateSigningRequest, up issue.Upload, cause error) error {
	form := h.csrIssueForm(c, obj)
	if form == nil {
		// The page offers no form (any more): the reason alone.
		form = &model.CSRIssueForm{}
	}
	var invalid *issue.InvalidError
	var state *issue.StateError
	var api apierrors.APIStatus
	status := http.StatusInternalServerError
	switch {
	case errors.As(cause, &invalid):
		status, form.ErrorTitle = http.StatusUnprocessableEntity, "The certificate was not written"
	case errors.As(cause, &state):
		status, form.ErrorTitle = http.StatusConflict, "The certificate was not written"
	case errors.As(cause, &api):
		p := page.ErrorPage(cause)
		status, form.ErrorTitle, form.Causes = p.Status, "The API server refused the certificate ("+http.StatusText(p.Status)+")", p.Causes
		if apierrors.IsForbidden(cause) {
			form.ErrorTitle = "The API server refused the certificate: you may not sign for " + obj.Spec.SignerName +
				" (it takes update on certificatesigningrequests/status and sign on signers/" + obj.Spec.SignerName + ")"
		}
	default:
		return cause
	}
	form.Error = cause.Error()
	if state != nil {
		form.Error = state.Error()
	}
	// A private key pasted by mistake is not sent back to the browser.
	if !strings.Contains(string(up.Chain), "PRIVATE KEY") {
		form.Chain = string(up.Chain)
	}
	if !strings.Contains(string(up.Bundle), "PRIVATE KEY") {
		form.Bundle = string(up.Bundle)
	}
	kind, live, err := h.csrShown(c, obj.Name)
	if err != nil {
		return err
	}
	raw, err := h.d.Cluster.Object(kind.ID, live.Name)
	if err != nil {
		return err
	}
	p, err := h.csrDetailPage(c, kind, live, raw)
	if err != nil {
		return err
	}
	p.Issue = form
	return page.Render(c, status, pages.CSRDetail(p))
}

// readIssueUpload reads the certificate and the CA bundle from the form:
// each from its file field when a file was chosen, else from its text field.
func readIssueUpload(c echo.Context) (issue.Upload, error) {
	chain, err := formFileOrText(c, "chain", issue.MaxChainBytes)
	if err != nil {
		return issue.Upload{}, err
	}
	bundle, err := formFileOrText(c, "bundle", issue.MaxBundleBytes)
	if err != nil {
		return issue.Upload{}, err
	}
	return issue.Upload{Chain: chain, Bundle: bundle}, nil
}

// formFileOrText is the file field <field>_file if one was sent with
// content, else the text field <field>. Reading stops one byte past max, so
// the use case can say the input is too large without holding more.
func formFileOrText(c echo.Context, field string, max int) ([]byte, error) {
	fh, err := c.FormFile(field + "_file")
	switch {
	case err == nil && fh.Size > 0:
		return readPart(fh, max)
	case err == nil, errors.Is(err, http.ErrMissingFile), errors.Is(err, http.ErrNotMultipart):
		return []byte(c.FormValue(field)), nil
	default:
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return nil, err // the body limit's 413
		}
		return nil, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The %s file could not be read: %v", field, err))
	}
}

func readPart(fh *multipart.FileHeader, max int) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(max)+1))
}

// awaitIssued waits, briefly, for the shared cache to hold the CSR as the API
// server stored it, so that the page the browser is sent to shows the
// certificate just written. The watch delivers within milliseconds; after
// the bound the page shows what the cache has, and live updates follow.
func (h *Handlers) awaitIssued(ctx context.Context, name string, stored *certificatesv1.CertificateSigningRequest) {
	if stored == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := h.d.Cluster.CSR(name); err == nil && c.UID == stored.UID && len(c.Status.Certificate) > 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
