package csrs

import (
	"net/http"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// withCertificate returns obj with its issued certificate, which the cache
// leaves out (kube.CertificateLeftOut), and with its request's PEM, of which
// the cache keeps a decided request's summary (csr.IsSummary): read with one
// GET as the user, taken only from the very object obj is (same UID; a
// certificate, once issued, never changes, nor does a request). ok is false
// when it could not be read (no Lookup, the GET failed, or the name now
// holds another request: replaced since).
func (h *Handlers) withCertificate(c echo.Context, obj *certificatesv1.CertificateSigningRequest) (_ *certificatesv1.CertificateSigningRequest, ok bool, err error) {
	if !kube.CertificateLeftOut(obj) && !csr.IsSummary(obj.Spec.Request) {
		return obj, true, nil
	}
	if h.d.Lookup == nil {
		return obj, false, nil
	}
	live, err := h.d.Lookup.CSR(c.Request().Context(), obj.Name)
	if err != nil {
		return obj, false, err
	}
	if live.UID != obj.UID {
		return obj, false, nil
	}
	out := obj.DeepCopy()
	out.Status.Certificate = live.Status.Certificate
	out.Spec.Request = live.Spec.Request
	return out, true, nil
}

// detailWithCertificate is obj with its certificate for its page; when it
// cannot be read, the page shows the cache's object, whose certificate says
// it was left out, and the log says why.
func (h *Handlers) detailWithCertificate(c echo.Context, obj *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	full, ok, err := h.withCertificate(c, obj)
	if !ok {
		h.d.Log.Warn("the issued certificate was not read", "csr", obj.Name, "err", err)
	}
	return full
}

// certificateUnread answers a download whose certificate could not be read.
func certificateUnread(name string, err error) error {
	if err != nil {
		return err
	}
	return echo.NewHTTPError(http.StatusConflict, name+" was replaced since (another request under the same name): its certificate is not the one shown.")
}
